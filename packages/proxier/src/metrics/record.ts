// Turning one sync's outcome into metric updates, in one place for every backend.
import type { IPFamily } from "@switchyard/basics";
import type { ProxyMetrics } from "./metrics.js";

export interface SyncOutcome {
  readonly family: IPFamily;
  readonly ok: boolean;
  readonly fullSync: boolean;
  /** Start and end of the sync, ms since the epoch (injected clock). */
  readonly startMs: number;
  readonly endMs: number;
  /** Trigger times of the changes this sync wrote; only counted when it succeeded. */
  readonly triggerTimes?: readonly Date[];
  readonly noLocalEndpoints?: { readonly internal: number; readonly external: number };
}

/**
 * Records a sync. Like kube-proxy, the duration is observed for failed syncs too, while the
 * last-sync timestamp and the programming latency only move on success. Backend failure
 * counters are the caller's, since only it knows which step failed.
 */
export function recordSync(m: ProxyMetrics, o: SyncOutcome): void {
  const labels = { ip_family: o.family };
  const seconds = (o.endMs - o.startMs) / 1000;
  m.syncProxyRulesLatency.observe(labels, seconds);
  (o.fullSync ? m.syncFullProxyRulesLatency : m.syncPartialProxyRulesLatency)?.observe(labels, seconds);
  if (!o.ok) return;
  m.syncProxyRulesLastTimestamp.set(labels, o.endMs / 1000);
  for (const t of o.triggerTimes ?? []) {
    const latency = (o.endMs - t.getTime()) / 1000;
    // A trigger time from the future is clock skew, not a latency.
    if (latency >= 0) m.networkProgrammingLatency.observe(labels, latency);
  }
  if (o.noLocalEndpoints) {
    m.noLocalEndpointsTotal.set({ ...labels, traffic_policy: "internal" }, o.noLocalEndpoints.internal);
    m.noLocalEndpointsTotal.set({ ...labels, traffic_policy: "external" }, o.noLocalEndpoints.external);
  }
}

/** Records a change that will need a sync (the *_changes_total counters and the queued time). */
export function recordQueued(
  m: ProxyMetrics,
  family: IPFamily,
  kind: "service" | "endpoints",
  nowMs: number,
  pending: number,
): void {
  (kind === "service" ? m.serviceChangesTotal : m.endpointChangesTotal).inc();
  (kind === "service" ? m.serviceChangesPending : m.endpointChangesPending).set(pending);
  m.syncProxyRulesLastQueuedTimestamp.set({ ip_family: family }, nowMs / 1000);
}

/**
 * Records one conntrack reconcile round, as upstream does after it tried the deletes (also
 * when some failed; a failed listing records nothing). Adding 0 still creates the series.
 */
export function recordConntrackReconcile(
  m: ProxyMetrics,
  family: IPFamily,
  seconds: number,
  deleted: number,
): void {
  const labels = { ip_family: family };
  m.conntrackReconcilerSyncDuration.observe(labels, seconds);
  m.conntrackReconcilerDeletedEntriesTotal.inc(labels, deleted);
}
