import type { NodeView, ProxyView } from "../view-model.js";
import { Chart, spanUntil } from "./chart.js";
import { ago, clock, millis } from "./format.js";

const rules = (p: ProxyView) =>
  p.rules ? `${p.rules.iptablesLegacy} / ${p.rules.iptablesNft} / ${p.rules.nftables}` : "-";

/** ebpf mode writes maps, not rules: their sizes under the rule counts (which then show what other modes left). */
function BPFMaps({ proxy }: { proxy: ProxyView }) {
  if (proxy.bpfMaps.length === 0) return null;
  return (
    <div class="bpf-maps" data-testid={`bpf-maps-${proxy.node}`}>
      {proxy.bpfMaps.map((m) => (
        <div key={m.name}>
          <span class="muted">{m.name}</span> {m.entries}
        </div>
      ))}
    </div>
  );
}

function SyncChart({ proxy, now }: { proxy: ProxyView; now: number }) {
  if (proxy.syncHistory.length === 0) return <span class="muted">no syncs seen yet</span>;
  const data: [number[], number[]] = [
    proxy.syncHistory.map((s) => s.at / 1000),
    proxy.syncHistory.map((s) => s.meanMs),
  ];
  return (
    <Chart
      data={data}
      series={[{ label: "mean sync", stroke: "#2f5bd3" }]}
      height={110}
      format={millis}
      legend={false}
      xRange={spanUntil(proxy.syncHistory[0]?.at, now, 300)}
      testId={`sync-${proxy.node}`}
    />
  );
}

/** Nodes by zone, and per node its proxy: mode, rules (or ebpf maps) in the kernel, syncs, network programming latency. */
export function Nodes({ nodes, proxies, now }: { nodes: NodeView[]; proxies: ProxyView[]; now: number }) {
  const zones = [...new Set(nodes.map((n) => n.zone))].sort();
  const proxyOf = new Map(proxies.map((p) => [p.node, p]));
  return (
    <section id="nodes">
      <h2>Nodes and their proxies</h2>
      <div class="zones">
        {zones.map((z) => (
          <span key={z}>
            <b>{z || "(no zone)"}</b>:{" "}
            {nodes
              .filter((n) => n.zone === z)
              .map((n) => n.name)
              .join(", ")}
          </span>
        ))}
      </div>
      <table>
        <thead>
          <tr>
            <th>node</th>
            <th>zone</th>
            <th>ready</th>
            <th>address</th>
            <th>proxy mode</th>
            <th title="lines of ours: iptables-legacy / iptables-nft / nftables; in ebpf mode, each map's entries">
              rules (legacy/nft/nftables), maps
            </th>
            <th>last sync</th>
            <th class="num">syncs</th>
            <th title="kubeproxy_network_programming_duration_seconds">programming p50 / p99</th>
            <th style="width: 34%">sync duration (mean between reads, last 5 min or more)</th>
          </tr>
        </thead>
        <tbody>
          {nodes.map((n) => {
            const p = proxyOf.get(n.name);
            return (
              <tr key={n.name} data-node={n.name} data-programmed={p?.programming.count ?? 0}>
                <td>
                  {n.name} {n.roles.length > 0 && <span class="muted">({n.roles.join(", ")})</span>}
                </td>
                <td>{n.zone}</td>
                <td class={n.ready ? "ok" : "bad"}>{n.ready ? "Ready" : "NotReady"}</td>
                <td>
                  {n.internalIP} <span class="muted">{n.podCIDR}</span>
                </td>
                <td class="proxy-mode" title={p?.error || undefined}>
                  {p?.mode || <span class="bad">{p?.error ? "no answer" : "-"}</span>}
                </td>
                <td>
                  {p ? rules(p) : "-"}
                  {p && <BPFMaps proxy={p} />}
                </td>
                <td title={p?.lastSyncAt ? clock(p.lastSyncAt) : undefined}>{ago(p?.lastSyncAt, now)}</td>
                <td class="num">{p?.syncs ?? "-"}</td>
                <td>
                  {millis(p?.programming.p50Ms)} / {millis(p?.programming.p99Ms)}{" "}
                  <span class="muted">({p?.programming.count ?? 0})</span>
                </td>
                <td>{p && <SyncChart proxy={p} now={now} />}</td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}
