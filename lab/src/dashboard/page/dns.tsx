import type { DnsPodView, DnsView } from "../view-model.js";
import { percent, perSecond } from "./format.js";

const stateClass: Record<DnsPodView["state"], string> = {
  serving: "ok",
  "not ready": "bad",
  lameduck: "warn",
  terminating: "bad",
  pending: "muted",
};

function state(p: DnsPodView, now: number) {
  if (p.state === "lameduck" && p.lameduckEndsAt !== undefined)
    return `lameduck, ${Math.max(0, (p.lameduckEndsAt - now) / 1000).toFixed(1)}s left`;
  return p.state;
}

/** The DNS pods: whether each serves, its query rate and cache hit ratio, and the lameduck they are given. */
export function Dns({ dns, now }: { dns: DnsView; now: number }) {
  return (
    <section id="dns">
      <h2>Cluster DNS</h2>
      <p>
        lameduck: <b data-testid="lameduck">{dns.lameduck || "none"}</b>{" "}
        <span class="muted">(the coredns ConfigMap's health plugin)</span>
      </p>
      <table>
        <thead>
          <tr>
            <th>pod</th>
            <th>node</th>
            <th>address</th>
            <th>state</th>
            <th class="num">queries/s</th>
            <th class="num">cache hits</th>
            <th class="num">requests</th>
          </tr>
        </thead>
        <tbody>
          {dns.pods.map((p) => (
            <tr key={p.name} data-dns-pod={p.name} title={p.error || undefined}>
              <td>{p.name}</td>
              <td>{p.node}</td>
              <td>{p.ip}</td>
              <td class={stateClass[p.state]}>{state(p, now)}</td>
              <td class="num">{perSecond(p.qps)}</td>
              <td class="num">{percent(p.cacheHitRatio)}</td>
              <td class="num">{p.requests ?? "-"}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}
