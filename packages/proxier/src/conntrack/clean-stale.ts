// One round of the conntrack reconciler (upstream's CleanStaleEntries): list the family's
// UDP entries, pick the stale ones from the current maps (and, unlike upstream, the finished
// exchanges with terminating endpoints the rules left), delete them, and record the round's
// duration and deletions. Best effort: a failure is logged, never thrown, because
// a stale flow only lasts until its timeout and must not fail the sync that came before.
import type { Clock } from "@switchyard/kube";
import type { ProxyMetrics } from "../metrics/metrics.js";
import { recordConntrackReconcile } from "../metrics/record.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import type { ProxierLogger } from "../proxier/backend.js";
import type { IPFamily } from "../util/ip.js";
import type { ConntrackTable } from "./conntrack.js";
import { drainedConntrackFlows, staleConntrackFlows } from "./reconcile.js";

export interface CleanStaleEntriesInput {
  readonly table: ConntrackTable;
  readonly family: IPFamily;
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  readonly metrics: ProxyMetrics;
  /** Only read: how long each reconcile took. */
  readonly clock: Pick<Clock, "now">;
  readonly logger: ProxierLogger;
  /**
   * This node's name, to tell which terminating endpoints its rules no longer choose: finished exchanges with them
   * are deleted too (drainedConntrackFlows). Undefined keeps upstream's rule alone (serving endpoints keep theirs).
   */
  readonly drainTerminatingOn?: string;
}

/** Returns how many entries were deleted (for logs and tests). */
export async function cleanStaleEntries(o: CleanStaleEntriesInput): Promise<number> {
  const start = o.clock.now();
  let entries: Awaited<ReturnType<ConntrackTable["listUDP"]>>;
  try {
    entries = await o.table.listUDP(o.family);
  } catch (error) {
    // Upstream gives up on this round without recording it; the next UDP change retries.
    o.logger.error("failed to list conntrack entries", { family: o.family, error });
    return 0;
  }
  const stale = staleConntrackFlows(entries, o.services, o.endpoints);
  const drained =
    o.drainTerminatingOn === undefined
      ? []
      : drainedConntrackFlows(entries, o.services, o.endpoints, o.drainTerminatingOn);
  const none = { deleted: 0, errors: [] };
  const r = stale.length === 0 ? none : await o.table.delete(o.family, stale);
  const d = drained.length === 0 ? none : await o.table.delete(o.family, drained, true);
  for (const error of [...r.errors, ...d.errors]) {
    o.logger.warn("deleting a stale conntrack entry failed", { family: o.family, error });
  }
  recordConntrackReconcile(o.metrics, o.family, (o.clock.now() - start) / 1000, r.deleted + d.deleted);
  return r.deleted + d.deleted;
}
