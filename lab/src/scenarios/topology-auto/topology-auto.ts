import type { Event, Node, Pod } from "kubernetes-types/core/v1.js";
import { hollowLabel, inPool } from "../kit/hollow-nodes.js";
import type {
  ClaimFinding,
  Scenario,
  ScenarioContext,
  ScenarioParam,
  ScenarioReport,
} from "../kit/scenario.js";
import { numberParam, stringParam } from "../kit/scenario.js";
import {
  inNamespace,
  openLab,
  readyEndpoints,
  type ScenarioLab,
  serviceSlices,
} from "../kit/scenario-lab.js";
import { SliceWatch } from "../kit/slice-watch.js";
import {
  autoCanHint,
  describeHinted,
  flapPoint,
  hasHints,
  hintedByZone,
  worstLoad,
  type ZoneRatios,
} from "./auto-allocation.js";

const namespace = "switchyard-topology-auto";

const params = {
  splits: {
    key: "splits",
    default: "2:20,5:17,11:11",
    help: "endpoints in the first zone : in the second, measured in turn",
  },
  flaps: {
    key: "flaps",
    default: "3",
    help: "times one endpoint is added and removed again at the count where Auto turns hints on or off",
  },
  quietMs: {
    key: "quiet-ms",
    default: "2000",
    help: "no slice write for this long means the controller has settled",
  },
} satisfies Record<string, ScenarioParam>;

export const topologyAuto: Scenario = {
  name: "topology-auto",
  summary: "topology-mode: Auto against PreferSameZone on uneven zones; when hints are withheld, and flaps",
  claims: ["C5", "C7"],
  params: Object.values(params),
  async run(ctx: ScenarioContext): Promise<ScenarioReport> {
    const splits = stringParam(ctx, params.splits)
      .split(",")
      .map((s) => {
        const [a, b] = s.split(":").map(Number);
        if (!Number.isInteger(a) || !Number.isInteger(b) || (a ?? -1) < 0 || (b ?? -1) < 0)
          throw new Error(
            `scenario topology-auto: --set splits wants a:b,... with whole numbers, got "${s}"`,
          );
        return [a, b] as [number, number];
      });
    const p = {
      splits,
      flaps: Math.floor(numberParam(ctx, params.flaps)),
      quietMs: numberParam(ctx, params.quietMs),
    };
    const lab = await openLab(ctx, "topology-auto");
    let watch: SliceWatch | undefined;
    try {
      return await inNamespace(
        lab,
        namespace,
        async () => {
          watch = await SliceWatch.start(lab.client, namespace);
          return await measure(lab, watch, p);
        },
        async () => watch?.stop(),
      );
    } finally {
      lab.close();
    }
  },
};

type Params = { splits: Array<[number, number]>; flaps: number; quietMs: number };

/** Zone CPU shares as the controller computes them: Ready nodes' allocatable CPU, control plane left out. */
async function zoneRatios(lab: ScenarioLab): Promise<ZoneRatios> {
  const nodes = (await lab.client.call<{ items: Node[] }>("GET", "/api/v1/nodes")).items;
  const cpu = new Map<string, number>();
  for (const n of nodes) {
    if (n.metadata?.labels?.[hollowLabel]) continue;
    // The controller leaves control-plane nodes out (kind's has this label; the netns lab has none).
    if (n.metadata?.labels?.["node-role.kubernetes.io/control-plane"] !== undefined) continue;
    if (!n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")) continue;
    const zone = n.metadata?.labels?.["topology.kubernetes.io/zone"] ?? "";
    const raw = n.status?.allocatable?.cpu ?? "0";
    const milli = raw.endsWith("m") ? Number(raw.slice(0, -1)) : Number(raw) * 1000;
    cpu.set(zone, (cpu.get(zone) ?? 0) + milli);
  }
  const total = [...cpu.values()].reduce((a, b) => a + b, 0);
  return Object.fromEntries([...cpu].sort(([a], [b]) => (a < b ? -1 : 1)).map(([z, c]) => [z, c / total]));
}

function pausePod(image: string, name: string, zone: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels: { app: "auto" } },
    spec: {
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      nodeSelector: { "topology.kubernetes.io/zone": zone },
      containers: [{ name: "pause", image }],
    },
  };
}

async function measure(lab: ScenarioLab, watch: SliceWatch, p: Params): Promise<ScenarioReport> {
  const lines: string[] = [];
  const ratios = await zoneRatios(lab);
  const zones = Object.keys(ratios);
  if (zones.length < 2)
    throw new Error("scenario topology-auto needs nodes in at least 2 zones (up --zones 2)");
  const [zoneA, zoneB] = zones as [string, string];
  lines.push(
    `zones by allocatable CPU (Auto's traffic model): ${zones.map((z) => `${z} ${((ratios[z] ?? 0) * 100).toFixed(0)}%`).join(", ")}`,
  );
  await createServices(lab);
  const setSplit = splitSetter(lab, watch, p.quietMs, zoneA, zoneB);

  lines.push(
    "",
    `${zoneA}:${zoneB}  Auto (hinted for each zone, from which zone)                    worst load  PreferSameZone worst load`,
  );
  const rows: SplitRow[] = [];
  for (const [a, b] of p.splits) {
    await setSplit(a, b);
    const row = await measureSplit(lab, ratios, a, b);
    rows.push(row.row);
    lines.push(row.line);
  }
  lines.push(
    "  worst load: the busiest endpoint against an even spread, if each zone's traffic follows its CPU share and stays on the endpoints hinted for it",
  );

  const flaps = await measureFlaps(lab, ratios, p.flaps, setSplit);
  lines.push("", flaps.line);
  const allEvents = await hintEvents(lab);
  lines.push(
    `events on Service auto: ${[...new Set(allEvents.map((e) => `${e.reason}: ${e.message}`))].join(" | ") || "none"}`,
  );
  return { scenario: "topology-auto", lines, findings: topologyAutoFindings(rows, flaps, p.flaps) };
}

/** The two Services over the same pods: one with topology-mode Auto, one with trafficDistribution PreferSameZone. */
async function createServices(lab: ScenarioLab): Promise<void> {
  const svc = (name: string, extra: Record<string, unknown>, annotations?: Record<string, string>) =>
    lab.client.call("POST", `/api/v1/namespaces/${namespace}/services`, {
      metadata: { name, ...(annotations ? { annotations } : {}) },
      spec: { selector: { app: "auto" }, ports: [{ port: 80, targetPort: 8080 }], ...extra },
    });
  await svc("auto", {}, { "service.kubernetes.io/topology-mode": "Auto" });
  await svc("same-zone", { trafficDistribution: "PreferSameZone" });
}

type SetSplit = (a: number, b: number) => Promise<void>;

/**
 * A function that makes the pods a:b over the two zones (adding or deleting only the difference) and returns once
 * both Services' slices hold exactly that many ready endpoints and the controller has gone quiet.
 */
function splitSetter(
  lab: ScenarioLab,
  watch: SliceWatch,
  quietMs: number,
  zoneA: string,
  zoneB: string,
): SetSplit {
  const { client, progress } = lab;
  const have: Record<string, string[]> = { [zoneA]: [], [zoneB]: [] };
  let serial = 0;
  return async (a: number, b: number) => {
    for (const [zone, want] of [
      [zoneA, a],
      [zoneB, b],
    ] as Array<[string, number]>) {
      const names = have[zone] as string[];
      const add: string[] = [];
      while (names.length + add.length < want) add.push(`${zone}-${serial++}`);
      const drop = names.splice(want);
      await inPool(add, 8, (n) =>
        client
          .call("POST", `/api/v1/namespaces/${namespace}/pods`, pausePod(lab.images.pause, n, zone))
          .then(() => {}),
      );
      names.push(...add);
      await inPool(drop, 8, (n) =>
        client.call("DELETE", `/api/v1/namespaces/${namespace}/pods/${n}`).then(() => {}),
      );
    }
    const total = a + b;
    progress.update(`split ${a}:${b}: waiting for ${total} ready endpoints`, true);
    await watch.settle(
      async () => {
        for (const name of ["auto", "same-zone"]) {
          const slices = await serviceSlices(lab, namespace, name);
          const all = slices.reduce((n, s) => n + (s.endpoints ?? []).length, 0);
          if (readyEndpoints(slices) !== total || all !== total) return false;
        }
        return true;
      },
      quietMs,
      lab.deadline(300_000),
    );
  };
}

/** One split as both Services' slices hint it. */
interface SplitRow {
  a: number;
  b: number;
  auto: boolean;
  autoLoad: number;
  sameLoad: number;
  sameOwnZone: boolean;
  detail: string;
}

async function measureSplit(
  lab: ScenarioLab,
  ratios: ZoneRatios,
  a: number,
  b: number,
): Promise<{ row: SplitRow; line: string }> {
  const auto = await serviceSlices(lab, namespace, "auto");
  const same = await serviceSlices(lab, namespace, "same-zone");
  const row = {
    a,
    b,
    auto: hasHints(auto),
    autoLoad: worstLoad(ratios, auto),
    sameLoad: worstLoad(ratios, same),
    sameOwnZone:
      [...hintedByZone(same)].every(([zone, from]) => from.size === 1 && from.has(zone)) && hasHints(same),
    detail: describeHinted(hintedByZone(auto)),
  };
  return {
    row,
    line: `${`${a}:${b}`.padEnd(12)}${row.detail.padEnd(64)}${`${row.autoLoad.toFixed(2)}×`.padEnd(12)}${describeHinted(hintedByZone(same))}, ${row.sameLoad.toFixed(2)}×`,
  };
}

/** What the flaps showed: the endpoint count they were at (none if Auto's rule never changes below 60). */
interface Flaps {
  at: number | undefined;
  flipCount: number;
  line: string;
}

/** Flaps: one endpoint in, one out, at the count where Auto's minimum per zone stops (or starts) fitting. */
async function measureFlaps(
  lab: ScenarioLab,
  ratios: ZoneRatios,
  flaps: number,
  setSplit: SetSplit,
): Promise<Flaps> {
  const n = flapPoint(ratios);
  if (n === undefined || flaps <= 0)
    return {
      at: n,
      flipCount: 0,
      line: "no endpoint count below 60 where one endpoint turns Auto's hints on or off",
    };
  const base: [number, number] = [Math.max(1, Math.floor(n / 3)), n - Math.max(1, Math.floor(n / 3))];
  await setSplit(...base);
  const autoHinted = async () => hasHints(await serviceSlices(lab, namespace, "auto"));
  const states: boolean[] = [await autoHinted()];
  const eventsBefore = countByReason(await hintEvents(lab));
  for (let i = 0; i < flaps; i++) {
    await setSplit(base[0], base[1] + 1);
    states.push(await autoHinted());
    await setSplit(...base);
    states.push(await autoHinted());
  }
  const flipCount = states.slice(1).filter((s, i) => s !== states[i]).length;
  const eventsAfter = countByReason(await hintEvents(lab));
  const events = [...eventsAfter]
    .map(([reason, k]) => ({ reason, n: k - (eventsBefore.get(reason) ?? 0) }))
    .filter((e) => e.n > 0);
  return {
    at: n,
    flipCount,
    line:
      `flaps: ${n} ↔ ${n + 1} endpoints (${base[0]}:${base[1]} ↔ ${base[0]}:${base[1] + 1}), ${flaps} times: hints ${states.map((s) => (s ? "on" : "off")).join(" → ")}; ` +
      `${flipCount} flips in ${2 * flaps} changes; events: ${events.map((e) => `${e.n}× ${e.reason}`).join(", ") || "none new"}` +
      ` (controller's rule says: ${n} ${autoCanHint(ratios, n) ? "on" : "off"}, ${n + 1} ${autoCanHint(ratios, n + 1) ? "on" : "off"})`,
  };
}

/** C5 and C7, judged on the first split whose first zone has fewer endpoints (2:20 by default), else the first. */
function topologyAutoFindings(rows: SplitRow[], flaps: Flaps, flapTimes: number): ClaimFinding[] {
  const twoTwenty = rows.find((r) => r.a < r.b) ?? rows[0];
  if (!twoTwenty) return [];
  const n = flaps.at;
  return [
    {
      claim: "C5",
      measured:
        `${twoTwenty.a}:${twoTwenty.b} with Auto: hints ${twoTwenty.auto ? "written" : "withheld"} (${twoTwenty.detail}), worst endpoint at ${twoTwenty.autoLoad.toFixed(2)}× an even share; ` +
        `hints withheld in ${rows.filter((r) => !r.auto).length} of ${rows.length} splits; ${n !== undefined ? `at ${n}↔${n + 1} endpoints hints flipped ${flaps.flipCount} times in ${2 * flapTimes} changes` : "no flap point"}`,
      verdict: "half right",
      note:
        "Auto does not send a zone's clients to its few endpoints: it re-points endpoints of other zones to it until each zone is within 20% of its CPU share; " +
        "it withholds hints only when the total count cannot meet every zone's minimum (or node data is missing), which depends on the number of endpoints, not on the split; " +
        "near such a count, one pod more or less flips hints on and off",
    },
    {
      claim: "C7",
      measured: `PreferSameZone on the same pods: every ready endpoint hinted for its own zone in every split; at ${twoTwenty.a}:${twoTwenty.b} the busiest endpoint gets ${twoTwenty.sameLoad.toFixed(2)}× an even share (Auto: ${twoTwenty.autoLoad.toFixed(2)}×)`,
      verdict: rows.every((r) => r.sameOwnZone) ? "holds" : "wrong",
      note: "the overload C5 describes is what PreferSameZone does, by design",
    },
  ];
}

/** Events are aggregated (one object, a count), so occurrences are counted per reason. */
function countByReason(events: readonly Event[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const e of events) {
    const n = e.count ?? (e as { series?: { count?: number } }).series?.count ?? 1;
    out.set(e.reason ?? "", (out.get(e.reason ?? "") ?? 0) + n);
  }
  return out;
}

async function hintEvents(lab: ScenarioLab): Promise<Event[]> {
  const list = await lab.client.call<{ items: Event[] }>(
    "GET",
    `/api/v1/namespaces/${namespace}/events?fieldSelector=${encodeURIComponent("involvedObject.name=auto")}`,
  );
  return list.items
    .filter((e) => (e.reason ?? "").startsWith("TopologyAwareHints"))
    .sort((a, b) => ((a.metadata?.creationTimestamp ?? "") < (b.metadata?.creationTimestamp ?? "") ? -1 : 1));
}
