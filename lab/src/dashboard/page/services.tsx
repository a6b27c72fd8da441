import { useState } from "preact/hooks";
import type { EndpointView, HintSample, HintState, ServiceView, SliceView } from "../view-model.js";
import { Chart, spanUntil } from "./chart.js";
import { clock } from "./format.js";

const hintText: Record<HintState, string> = {
  all: "hints on every ready endpoint",
  some: "hints on some: proxies ignore them",
  none: "no hints",
};
const hintClass: Record<HintState, string> = { all: "ok", some: "warn", none: "muted" };

/**
 * The moments the hint state changed, newest first, as sentences: "dropped" when every ready endpoint had a hint
 * and then not all did (the proxies stop using them), "back" when they all have one again.
 */
function hintChanges(timeline: HintSample[]): string[] {
  const out: string[] = [];
  let hadAll = timeline[0]?.hints === "all";
  for (let i = 1; i < timeline.length; i++) {
    const [a, b] = [timeline[i - 1], timeline[i]];
    if (!a || !b || a.hints === b.hints) continue;
    const what =
      b.hints === "all"
        ? hadAll
          ? "hints back"
          : "hints on"
        : a.hints === "all"
          ? "hints dropped"
          : "hints changed";
    hadAll ||= b.hints === "all";
    out.push(
      `${clock(b.at)} ${what}: ${b.hinted} of ${b.ready} ready endpoints hinted (${hintText[b.hints]})`,
    );
  }
  return out.reverse();
}

function Timeline({ service, now }: { service: ServiceView; now: number }) {
  const points = [...service.timeline];
  const last = points.at(-1);
  // The last state holds until now.
  if (last) points.push({ ...last, at: Math.max(now, last.at) });
  const data: [number[], number[], number[], number[]] = [
    points.map((p) => p.at / 1000),
    points.map((p) => p.total),
    points.map((p) => p.ready),
    points.map((p) => p.hinted),
  ];
  const changes = hintChanges(service.timeline);
  return (
    <div>
      <Chart
        data={data}
        height={140}
        xRange={spanUntil(points[0]?.at, now, 120)}
        testId={`timeline-${service.namespace}/${service.name}`}
        series={[
          { label: "endpoints", stroke: "#98a2b3", stepped: true },
          { label: "ready", stroke: "#107c41", stepped: true },
          { label: "ready with hints", stroke: "#b54708", stepped: true, dash: [6, 4] },
        ]}
      />
      {changes.length > 0 ? (
        <ul class="changes">
          {changes.map((c) => (
            <li key={c}>{c}</li>
          ))}
        </ul>
      ) : (
        <p class="muted">hint state unchanged since the dashboard started</p>
      )}
    </div>
  );
}

const conditions = (e: EndpointView) =>
  [
    e.ready ? "ready" : "not ready",
    e.serving && !e.ready ? "serving" : "",
    e.terminating ? "terminating" : "",
  ]
    .filter(Boolean)
    .join(", ");

const hints = (e: EndpointView) =>
  e.hints
    ? [
        e.hints.zones.length ? `zones ${e.hints.zones.join(",")}` : "",
        e.hints.nodes.length ? `nodes ${e.hints.nodes.join(",")}` : "",
      ]
        .filter(Boolean)
        .join("; ")
    : "-";

function Slice({ slice }: { slice: SliceView }) {
  return (
    <div class="slice" data-slice={slice.name}>
      <div>
        <b>{slice.name}</b>{" "}
        <span class="muted">
          {slice.addressType} · {slice.ports.join(", ") || "no ports"} · {slice.managedBy}
        </span>
      </div>
      <table>
        <thead>
          <tr>
            <th>address</th>
            <th>pod</th>
            <th>node / zone</th>
            <th>conditions</th>
            <th>hints</th>
          </tr>
        </thead>
        <tbody>
          {slice.endpoints.map((e) => (
            <tr key={e.addresses.join(",")} data-endpoint={e.addresses[0]}>
              <td>{e.addresses.join(", ")}</td>
              <td>{e.pod}</td>
              <td>
                {e.node} <span class="muted">{e.zone}</span>
              </td>
              <td class={e.ready ? "ok" : e.serving ? "warn" : "bad"}>{conditions(e)}</td>
              <td>{hints(e)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {slice.hiddenEndpoints > 0 && <p class="muted">and {slice.hiddenEndpoints} more endpoints</p>}
    </div>
  );
}

function Service({ service, now }: { service: ServiceView; now: number }) {
  const id = `${service.namespace}/${service.name}`;
  const c = service.counts;
  // The body (a chart, the endpoints) is made only while open: a lab may have thousands of Services.
  const [open, setOpen] = useState(false);
  return (
    <details
      class="svc"
      data-service={id}
      data-ready={c.ready}
      data-total={c.total}
      data-hints={service.hints}
      open={open}
      onToggle={(e) => setOpen((e.currentTarget as HTMLDetailsElement).open)}
    >
      <summary>
        <b>{id}</b>
        <span>
          {service.type} {service.clusterIP}
        </span>
        <span class="muted">{service.ports.join(", ")}</span>
        <span class="counts">
          {c.ready}/{c.total} ready{c.terminating > 0 ? `, ${c.terminating} terminating` : ""}
        </span>
        <span class={`badge ${hintClass[service.hints]}`}>{hintText[service.hints]}</span>
        {service.topology && <span class="muted">topology: {service.topology}</span>}
      </summary>
      {open && (
        <div class="svc-body">
          <Timeline service={service} now={now} />
          <div>
            {service.slices.length === 0 ? (
              <p class="muted">no EndpointSlices</p>
            ) : (
              service.slices.map((s) => <Slice key={s.name} slice={s} />)
            )}
          </div>
        </div>
      )}
    </details>
  );
}

/** Services → EndpointSlices → endpoints, each Service with the timeline of its counts and hint state. */
export function Services({ services, now }: { services: ServiceView[]; now: number }) {
  return (
    <section id="services">
      <h2>Services ({services.length})</h2>
      {services.map((s) => (
        <Service key={`${s.namespace}/${s.name}`} service={s} now={now} />
      ))}
    </section>
  );
}
