// One round of the conntrack reconciler (upstream's CleanStaleEntries): list the family's
// UDP entries, pick the stale ones from the current maps, delete them, and record the
// round's duration and deletions. Best effort: a failure is logged, never thrown, because
// a stale flow only lasts until its timeout and must not fail the sync that came before.
import type { ProxyMetrics } from "../metrics/metrics.js";
import { recordConntrackReconcile } from "../metrics/record.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import type { ProxierLogger } from "../proxier/backend.js";
import type { Clock } from "../sync/timers.js";
import type { IPFamily } from "../util/ip.js";
import type { ConntrackTable } from "./conntrack.js";
import { staleConntrackFlows } from "./reconcile.js";

export interface CleanStaleEntriesInput {
  readonly table: ConntrackTable;
  readonly family: IPFamily;
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  readonly metrics: ProxyMetrics;
  readonly clock: Clock;
  readonly logger: ProxierLogger;
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
  const r = stale.length === 0 ? { deleted: 0, errors: [] } : await o.table.delete(o.family, stale);
  for (const error of r.errors) {
    o.logger.warn("deleting a stale conntrack entry failed", { family: o.family, error });
  }
  recordConntrackReconcile(o.metrics, o.family, (o.clock.now() - start) / 1000, r.deleted);
  return r.deleted;
}
