// kube-proxy's metrics, with upstream's names, help texts, labels and buckets (subsystem
// "kubeproxy"; the ip_family labels arrived in 1.34). Like upstream, the mode decides which
// backend-specific metrics exist at all. Each call builds a fresh set on its own registry,
// so tests and several proxiers in one process do not collide.
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { ProxyMode } from "../apply/cleanup.js";

/** prometheus.ExponentialBuckets(start, factor, count). */
export function exponentialBuckets(start: number, factor: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start * factor ** i);
}

/** prometheus.LinearBuckets(start, width, count). */
export function linearBuckets(start: number, width: number, count: number): number[] {
  return Array.from({ length: count }, (_, i) => start + width * i);
}

/** component-base's MergeBuckets, which starts the result with a 0 bound. */
export function mergeBuckets(...parts: number[][]): number[] {
  return [0, ...parts.flat()];
}

const SYNC_BUCKETS = exponentialBuckets(0.001, 2, 15);
// 0.25 s and 0.5 s, every second to 59 s, every 5 s to 115 s, every 30 s to 5 min.
const NETWORK_PROGRAMMING_BUCKETS = mergeBuckets(
  linearBuckets(0.25, 0.25, 2),
  linearBuckets(1, 1, 59),
  linearBuckets(60, 5, 12),
  linearBuckets(120, 30, 7),
);

type FamilyLabel = "ip_family";

export interface ProxyMetrics {
  readonly registry: Registry;
  /** One sync of the proxy rules (full and partial). */
  readonly syncProxyRulesLatency: Histogram<FamilyLabel>;
  readonly syncProxyRulesLastQueuedTimestamp: Gauge<FamilyLabel>;
  /** When proxy rules were last synced successfully. */
  readonly syncProxyRulesLastTimestamp: Gauge<FamilyLabel>;
  readonly endpointChangesPending: Gauge;
  readonly endpointChangesTotal: Counter;
  readonly serviceChangesPending: Gauge;
  readonly serviceChangesTotal: Counter;
  readonly proxyHealthzTotal: Counter<"code">;
  readonly proxyLivezTotal: Counter<"code">;
  /**
   * From an EndpointSlice's last-change-trigger-time to the rules being written (the network
   * programming latency SLI). The trigger time comes from the control plane's clock, so skew
   * between it and this node shows up here.
   */
  readonly networkProgrammingLatency: Histogram<FamilyLabel>;
  readonly noLocalEndpointsTotal: Gauge<FamilyLabel | "traffic_policy">;
  /** One round of the stale UDP conntrack reconciler (every mode registers both). */
  readonly conntrackReconcilerSyncDuration: Histogram<FamilyLabel>;
  readonly conntrackReconcilerDeletedEntriesTotal: Counter<FamilyLabel>;
  // iptables mode only:
  readonly syncFullProxyRulesLatency?: Histogram<FamilyLabel>;
  readonly syncPartialProxyRulesLatency?: Histogram<FamilyLabel>;
  readonly iptablesRestoreFailuresTotal?: Counter<FamilyLabel>;
  readonly iptablesPartialRestoreFailuresTotal?: Counter<FamilyLabel>;
  readonly iptablesRulesTotal?: Gauge<FamilyLabel | "table">;
  readonly iptablesRulesLastSync?: Gauge<FamilyLabel | "table">;
  // nftables mode only:
  readonly nftablesSyncFailuresTotal?: Counter<FamilyLabel>;
  readonly nftablesCleanupFailuresTotal?: Counter<FamilyLabel>;
  // ebpf mode only (not upstream's: named after the nftables ones):
  readonly bpfSyncFailuresTotal?: Counter<FamilyLabel>;
  /** Entries in each map the proxy writes, after the last sync. */
  readonly bpfMapEntries?: Gauge<FamilyLabel | "map">;
  /** Entries the last sync wrote or deleted, per map. */
  readonly bpfMapEntriesLastSync?: Gauge<FamilyLabel | "map">;
  /** Connected UDP sockets ended because the backend they were sent to no longer serves their Service. */
  readonly bpfSocketsDestroyedTotal?: Counter<FamilyLabel>;
}

const fam = ["ip_family"] as const;

/**
 * component-base writes a metric's stability level in front of its help text, and every kube-proxy metric of
 * v1.37.2 is ALPHA: `# HELP kubeproxy_sync_proxy_rules_duration_seconds [ALPHA] SyncProxyRules latency in seconds`.
 */
const alpha = (help: string) => `[ALPHA] ${help}`;

/** Builds metrics named `kubeproxy_<name>` with ALPHA help texts, all on one registry. */
interface MetricFactory {
  histogram<L extends string>(
    name: string,
    help: string,
    buckets: number[],
    labelNames: readonly L[],
  ): Histogram<L>;
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[]): Gauge<L>;
  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L>;
}

function metricFactory(registry: Registry): MetricFactory {
  const r = [registry];
  return {
    histogram: (name, help, buckets, labelNames) =>
      new Histogram({ name: `kubeproxy_${name}`, help: alpha(help), buckets, labelNames, registers: r }),
    gauge: (name, help, labelNames) =>
      new Gauge({ name: `kubeproxy_${name}`, help: alpha(help), labelNames, registers: r }),
    counter: (name, help, labelNames) =>
      new Counter({ name: `kubeproxy_${name}`, help: alpha(help), labelNames, registers: r }),
  };
}

// The groups below register in the order they are called, and that order is the order of the
// /metrics output, so newProxyMetrics calls them in upstream's order.

export function newProxyMetrics(mode: ProxyMode, registry = new Registry()): ProxyMetrics {
  const f = metricFactory(registry);
  const core = {
    registry,
    ...syncLoopMetrics(f),
    ...healthzMetrics(f),
    ...endpointMetrics(f),
    ...conntrackReconcilerMetrics(f),
  };
  switch (mode) {
    case "iptables":
      return {
        ...core,
        ...fullAndPartialSyncMetrics(f),
        ...iptablesRestoreFailureMetrics(f),
        ...iptablesPartialRestoreFailureMetrics(f),
        ...iptablesRuleCountMetrics(f),
      };
    case "ipvs":
      // IPVS mode writes iptables rules too, but upstream counts only its restore failures there.
      return { ...core, ...iptablesRestoreFailureMetrics(f) };
    case "nftables":
      return { ...core, ...fullAndPartialSyncMetrics(f), ...nftablesFailureMetrics(f) };
    case "ebpf":
      return { ...core, ...fullAndPartialSyncMetrics(f), ...bpfMetrics(f) };
  }
}

function syncLoopMetrics(f: MetricFactory) {
  return {
    syncProxyRulesLatency: f.histogram(
      "sync_proxy_rules_duration_seconds",
      "SyncProxyRules latency in seconds",
      SYNC_BUCKETS,
      fam,
    ),
    syncProxyRulesLastQueuedTimestamp: f.gauge(
      "sync_proxy_rules_last_queued_timestamp_seconds",
      "The last time a sync of proxy rules was queued",
      fam,
    ),
    syncProxyRulesLastTimestamp: f.gauge(
      "sync_proxy_rules_last_timestamp_seconds",
      "The last time proxy rules were successfully synced",
      fam,
    ),
    endpointChangesPending: f.gauge(
      "sync_proxy_rules_endpoint_changes_pending",
      "Pending proxy rules Endpoint changes",
      [],
    ),
    endpointChangesTotal: f.counter(
      "sync_proxy_rules_endpoint_changes_total",
      "Cumulative proxy rules Endpoint changes",
      [],
    ),
    serviceChangesPending: f.gauge(
      "sync_proxy_rules_service_changes_pending",
      "Pending proxy rules Service changes",
      [],
    ),
    serviceChangesTotal: f.counter(
      "sync_proxy_rules_service_changes_total",
      "Cumulative proxy rules Service changes",
      [],
    ),
  };
}

function healthzMetrics(f: MetricFactory) {
  return {
    proxyHealthzTotal: f.counter("proxy_healthz_total", "Cumulative proxy healthz HTTP status", ["code"]),
    proxyLivezTotal: f.counter("proxy_livez_total", "Cumulative proxy livez HTTP status", ["code"]),
  };
}

function endpointMetrics(f: MetricFactory) {
  return {
    networkProgrammingLatency: f.histogram(
      "network_programming_duration_seconds",
      "In Cluster Network Programming Latency in seconds",
      NETWORK_PROGRAMMING_BUCKETS,
      fam,
    ),
    noLocalEndpointsTotal: f.gauge(
      "sync_proxy_rules_no_local_endpoints_total",
      "Number of services with a Local traffic policy and no endpoints",
      ["ip_family", "traffic_policy"],
    ),
  };
}

function conntrackReconcilerMetrics(f: MetricFactory) {
  return {
    conntrackReconcilerSyncDuration: f.histogram(
      "conntrack_reconciler_sync_duration_seconds",
      "ReconcileConntrackFlowsLatency latency in seconds",
      SYNC_BUCKETS,
      fam,
    ),
    conntrackReconcilerDeletedEntriesTotal: f.counter(
      "conntrack_reconciler_deleted_entries_total",
      "Cumulative conntrack flows deleted by conntrack reconciler",
      fam,
    ),
  };
}

/** iptables and nftables mode both time full and partial syncs apart (upstream's RegisterMetrics, v1.37.2). */
function fullAndPartialSyncMetrics(f: MetricFactory) {
  return {
    syncFullProxyRulesLatency: f.histogram(
      "sync_full_proxy_rules_duration_seconds",
      "SyncProxyRules latency in seconds for full resyncs",
      SYNC_BUCKETS,
      fam,
    ),
    syncPartialProxyRulesLatency: f.histogram(
      "sync_partial_proxy_rules_duration_seconds",
      "SyncProxyRules latency in seconds for partial resyncs",
      SYNC_BUCKETS,
      fam,
    ),
  };
}

function iptablesRestoreFailureMetrics(f: MetricFactory) {
  return {
    iptablesRestoreFailuresTotal: f.counter(
      "sync_proxy_rules_iptables_restore_failures_total",
      "Cumulative proxy iptables restore failures",
      fam,
    ),
  };
}

function iptablesPartialRestoreFailureMetrics(f: MetricFactory) {
  return {
    iptablesPartialRestoreFailuresTotal: f.counter(
      "sync_proxy_rules_iptables_partial_restore_failures_total",
      "Cumulative proxy iptables partial restore failures",
      fam,
    ),
  };
}

function iptablesRuleCountMetrics(f: MetricFactory) {
  return {
    iptablesRulesTotal: f.gauge(
      "sync_proxy_rules_iptables_total",
      "Total number of iptables rules owned by kube-proxy",
      ["ip_family", "table"],
    ),
    iptablesRulesLastSync: f.gauge(
      "sync_proxy_rules_iptables_last",
      "Number of iptables rules written by kube-proxy in last sync",
      ["ip_family", "table"],
    ),
  };
}

function nftablesFailureMetrics(f: MetricFactory) {
  return {
    nftablesSyncFailuresTotal: f.counter(
      "sync_proxy_rules_nftables_sync_failures_total",
      "Cumulative proxy nftables sync failures",
      fam,
    ),
    nftablesCleanupFailuresTotal: f.counter(
      "sync_proxy_rules_nftables_cleanup_failures_total",
      "Cumulative proxy nftables cleanup failures",
      fam,
    ),
  };
}

/** ebpf mode's own, in the shape of the iptables rule counts and the nftables failure counter. */
function bpfMetrics(f: MetricFactory) {
  return {
    bpfSyncFailuresTotal: f.counter(
      "sync_proxy_rules_bpf_sync_failures_total",
      "Cumulative proxy BPF map sync failures",
      fam,
    ),
    bpfMapEntries: f.gauge(
      "sync_proxy_rules_bpf_map_entries",
      "Number of entries in each BPF map kube-proxy writes",
      ["ip_family", "map"],
    ),
    bpfMapEntriesLastSync: f.gauge(
      "sync_proxy_rules_bpf_map_entries_last",
      "Number of BPF map entries written or deleted by kube-proxy in last sync",
      ["ip_family", "map"],
    ),
    // The conntrack reconciler's deleted-entries counter is upstream's, for entries: sockets are counted apart.
    bpfSocketsDestroyedTotal: f.counter(
      "sync_proxy_rules_bpf_sockets_destroyed_total",
      "Cumulative connected UDP sockets kube-proxy ended because their backend stopped serving their Service",
      fam,
    ),
  };
}
