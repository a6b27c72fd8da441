import type { LoadStats } from "../agent/loadgen-stats.js";
import type { ProxyMode } from "../stack/manifests.js";
import type { RuleCounts } from "../stack/proxy-measure.js";

export type TrafficDelta = Pick<LoadStats, "tcp" | "dns">;

export interface NodeSwitch {
  node: string;
  from: string;
  to: ProxyMode;
  /** Label set (or removed) until the new proxy served its mode and had synced, the old pod gone. */
  switchSeconds: number;
  /** Mean of kubeproxy_sync_proxy_rules_duration_seconds over the old proxy's life, and over the new one's. */
  syncBeforeMs: number | undefined;
  syncAfterMs: number | undefined;
  rulesBefore: RuleCounts;
  rulesAfter: RuleCounts;
  /** The old mode's rules still in the node once it switched: must be 0. */
  leftovers: number;
  /** Per client node: what its traffic generator saw from just before the switch until the settle time after. */
  traffic: Record<string, TrafficDelta>;
}

export interface MigrationReport {
  to: ProxyMode;
  prepareSeconds: number | undefined;
  totalSeconds: number;
  switches: NodeSwitch[];
  /** Nodes already in the mode, left alone. */
  skipped: string[];
}

const ms = (v: number | undefined) => (v === undefined ? "-" : `${v.toFixed(1)}ms`);
const rules = (c: RuleCounts) =>
  `${c.iptablesLegacy}/${c.iptablesNft}/${c.nftables}${c.bpf === undefined ? "" : `/${c.bpf}`}`;

export const failures = (r: MigrationReport) =>
  r.switches.reduce(
    (sum, s) => sum + Object.values(s.traffic).reduce((n, t) => n + t.tcp.failures + t.dns.failures, 0),
    0,
  );

/** What failed while one node switched, one entry per client node and kind ("node-2 tcp 6/148"); [] for none. */
export function switchFailures(s: NodeSwitch): string[] {
  return Object.entries(s.traffic).flatMap(([client, t]) =>
    (["tcp", "dns"] as const)
      .filter((k) => t[k].failures > 0)
      .map((k) => `${client} ${k} ${t[k].failures}/${t[k].attempts}`),
  );
}

export function formatReport(r: MigrationReport): string {
  // Node names differ by runtime (node-1 on netns, <cluster>-control-plane on kind): the column fits the longest.
  const names = r.switches.flatMap((s) => [s.node, ...Object.keys(s.traffic)]);
  const width = Math.max(12, ...names.map((n) => n.length + 2));
  const lines = [
    `kube-proxy migration to ${r.to}: ${r.switches.length} node(s) switched in ${r.totalSeconds.toFixed(1)}s` +
      (r.prepareSeconds !== undefined
        ? ` (preparing the DaemonSets took ${r.prepareSeconds.toFixed(1)}s)`
        : "") +
      (r.skipped.length > 0 ? `; already ${r.to}: ${r.skipped.join(", ")}` : ""),
    r.switches.some((s) => s.rulesBefore.bpf !== undefined)
      ? "rules are iptables-legacy/iptables-nft/nftables lines of ours in the node's namespace, then ebpf mode's objects: BPF programs on its cgroup, objects pinned in its folder, lines of its nftables table"
      : "rules are iptables-legacy/iptables-nft/nftables lines of ours in the node's namespace",
    "",
    `${"NODE".padEnd(width)}FROM      TO        SWITCH   SYNC BEFORE  SYNC AFTER  RULES BEFORE   RULES AFTER    LEFTOVERS`,
  ];
  for (const s of r.switches)
    lines.push(
      `${s.node.padEnd(width)}${s.from.padEnd(10)}${s.to.padEnd(10)}${`${s.switchSeconds.toFixed(1)}s`.padEnd(9)}` +
        `${ms(s.syncBeforeMs).padEnd(13)}${ms(s.syncAfterMs).padEnd(12)}${rules(s.rulesBefore).padEnd(15)}` +
        `${rules(s.rulesAfter).padEnd(15)}${s.leftovers}`,
    );
  for (const s of r.switches) {
    lines.push("", `traffic while ${s.node} switched (failed/attempted, by client node):`);
    for (const [client, t] of Object.entries(s.traffic))
      lines.push(
        `  ${client.padEnd(width)}tcp ${t.tcp.failures}/${t.tcp.attempts}  dns ${t.dns.failures}/${t.dns.attempts}`,
      );
  }
  lines.push("", `failed connections and lookups in total: ${failures(r)}`);
  return lines.join("\n");
}
