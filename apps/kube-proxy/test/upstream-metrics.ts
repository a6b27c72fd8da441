// kube-proxy v1.37.2's kubeproxy_* metrics as its source declares them, written by reading
// pkg/proxy/metrics/metrics.go (names, Help strings, kinds, and which mode RegisterMetrics registers each in) and
// component-base/metrics (which writes a metric's stability level in front of its help: "[ALPHA] ..."). Not read
// from a running binary: metrics.diff.test.ts checks this table against the binary's /metrics where it shows a
// family (Go's registry leaves out a vector with no samples yet).
//
// Left out: the three winkernel_* counters (Windows' kernelspace mode), and nftables mode's localhost NodePort
// listener metrics, registered only under the KubeProxyNFTablesLocalhostNodePorts gate (alpha in v1.37, off by
// default), whose userspace proxy this proxy does not have.

export type Mode = "iptables" | "nftables" | "ipvs";
export type Kind = "counter" | "gauge" | "histogram";

export interface UpstreamMetric {
  readonly name: string;
  readonly kind: Kind;
  /** The Help string as written in metrics.go, without the stability level. */
  readonly help: string;
  readonly modes: readonly Mode[];
  /** Registered only when the kernel's nfacct answered (newNFAcctMetricCollector returns nil otherwise). */
  readonly needsNfacct?: true;
}

const ALL: readonly Mode[] = ["iptables", "nftables", "ipvs"];

export const UPSTREAM_METRICS: readonly UpstreamMetric[] = [
  // Every mode ("Core kube-proxy metrics for all backends", then the two winkernel lacks).
  {
    name: "sync_proxy_rules_duration_seconds",
    kind: "histogram",
    help: "SyncProxyRules latency in seconds",
    modes: ALL,
  },
  {
    name: "sync_proxy_rules_last_queued_timestamp_seconds",
    kind: "gauge",
    help: "The last time a sync of proxy rules was queued",
    modes: ALL,
  },
  {
    name: "sync_proxy_rules_last_timestamp_seconds",
    kind: "gauge",
    help: "The last time proxy rules were successfully synced",
    modes: ALL,
  },
  {
    name: "sync_proxy_rules_endpoint_changes_pending",
    kind: "gauge",
    help: "Pending proxy rules Endpoint changes",
    modes: ALL,
  },
  {
    name: "sync_proxy_rules_endpoint_changes_total",
    kind: "counter",
    help: "Cumulative proxy rules Endpoint changes",
    modes: ALL,
  },
  {
    name: "sync_proxy_rules_service_changes_pending",
    kind: "gauge",
    help: "Pending proxy rules Service changes",
    modes: ALL,
  },
  {
    name: "sync_proxy_rules_service_changes_total",
    kind: "counter",
    help: "Cumulative proxy rules Service changes",
    modes: ALL,
  },
  { name: "proxy_healthz_total", kind: "counter", help: "Cumulative proxy healthz HTTP status", modes: ALL },
  { name: "proxy_livez_total", kind: "counter", help: "Cumulative proxy livez HTTP status", modes: ALL },
  {
    name: "network_programming_duration_seconds",
    kind: "histogram",
    help: "In Cluster Network Programming Latency in seconds",
    modes: ALL,
  },
  {
    name: "sync_proxy_rules_no_local_endpoints_total",
    kind: "gauge",
    help: "Number of services with a Local traffic policy and no endpoints",
    modes: ALL,
  },
  {
    name: "conntrack_reconciler_sync_duration_seconds",
    kind: "histogram",
    help: "ReconcileConntrackFlowsLatency latency in seconds",
    modes: ALL,
  },
  {
    name: "conntrack_reconciler_deleted_entries_total",
    kind: "counter",
    help: "Cumulative conntrack flows deleted by conntrack reconciler",
    modes: ALL,
  },
  // iptables mode; the first two are NewDesc collectors reading nfacct objects.
  {
    name: "iptables_ct_state_invalid_dropped_packets_total",
    kind: "counter",
    help: "packets dropped by iptables to work around conntrack problems",
    modes: ["iptables"],
    needsNfacct: true,
  },
  {
    name: "iptables_localhost_nodeports_accepted_packets_total",
    kind: "counter",
    help: "Number of packets accepted on nodeports of loopback interface",
    modes: ["iptables"],
    needsNfacct: true,
  },
  {
    name: "sync_full_proxy_rules_duration_seconds",
    kind: "histogram",
    help: "SyncProxyRules latency in seconds for full resyncs",
    modes: ["iptables", "nftables"],
  },
  {
    name: "sync_partial_proxy_rules_duration_seconds",
    kind: "histogram",
    help: "SyncProxyRules latency in seconds for partial resyncs",
    modes: ["iptables", "nftables"],
  },
  {
    name: "sync_proxy_rules_iptables_restore_failures_total",
    kind: "counter",
    help: "Cumulative proxy iptables restore failures",
    modes: ["iptables", "ipvs"],
  },
  {
    name: "sync_proxy_rules_iptables_partial_restore_failures_total",
    kind: "counter",
    help: "Cumulative proxy iptables partial restore failures",
    modes: ["iptables"],
  },
  {
    name: "sync_proxy_rules_iptables_total",
    kind: "gauge",
    help: "Total number of iptables rules owned by kube-proxy",
    modes: ["iptables"],
  },
  {
    name: "sync_proxy_rules_iptables_last",
    kind: "gauge",
    help: "Number of iptables rules written by kube-proxy in last sync",
    modes: ["iptables"],
  },
  // nftables mode.
  {
    name: "sync_proxy_rules_nftables_sync_failures_total",
    kind: "counter",
    help: "Cumulative proxy nftables sync failures",
    modes: ["nftables"],
  },
  {
    name: "sync_proxy_rules_nftables_cleanup_failures_total",
    kind: "counter",
    help: "Cumulative proxy nftables cleanup failures",
    modes: ["nftables"],
  },
];

/** The `# HELP` and `# TYPE` lines upstream's /metrics writes for a metric. */
export function expositionLines(m: UpstreamMetric): [string, string] {
  const name = `kubeproxy_${m.name}`;
  return [`# HELP ${name} [ALPHA] ${m.help}`, `# TYPE ${name} ${m.kind}`];
}

/** `# HELP` and `# TYPE` lines of a scrape, by family name. */
export function familyLines(text: string, prefix = "kubeproxy_"): Map<string, [string, string]> {
  const out = new Map<string, [string, string]>();
  for (const line of text.split("\n")) {
    const m = /^# (HELP|TYPE) (\S+) /.exec(line);
    if (!m?.[2]?.startsWith(prefix)) continue;
    const entry = out.get(m[2]) ?? ["", ""];
    entry[m[1] === "HELP" ? 0 : 1] = line;
    out.set(m[2], entry);
  }
  return out;
}
