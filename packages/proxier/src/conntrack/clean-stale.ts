// One round of the conntrack reconciler (upstream's CleanStaleEntries): list the family's
// UDP entries, pick the stale ones from the current maps and delete them, and record the round's
// duration and deletions. Unlike upstream, the finished exchanges with terminating endpoints the
// rules left are given a second to live (DRAINED_ENTRY_SECONDS) rather than deleted. Best effort: a
// failure is logged, never thrown, because a stale flow only lasts until its timeout and must not
// fail the sync that came before.

import type { IPFamily } from "@switchyard/basics";
import type { Clock } from "@switchyard/kube";
import type { ProxyMetrics } from "../metrics/metrics.js";
import { recordConntrackReconcile } from "../metrics/record.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import type { ProxierLogger } from "../proxier/backend.js";
import type { ConntrackTable } from "./conntrack.js";
import type { ConntrackFlow } from "./flow.js";
import { drainedConntrackFlows, expirableFlows, staleConntrackFlows } from "./reconcile.js";

/**
 * How long an answered entry to a drained endpoint lives on. Deleting it outright lost a lookup now and then in a
 * DNS roll: a new socket that got the entry's port sent its query through it, the entry went before the answer came
 * back, and the answer, no longer translated to the ClusterIP, never reached the socket. A second is far longer than
 * a pod's answer takes and far shorter than a DNS pod's lameduck (CoreDNS's default is 5 s). Traffic through the entry
 * renews the kernel's own timeout; the next round shortens it again.
 */
export const DRAINED_ENTRY_SECONDS = 1;

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
   * expire within DRAINED_ENTRY_SECONDS (drainedConntrackFlows). Undefined keeps upstream's rule alone (serving
   * endpoints keep theirs).
   */
  readonly drainTerminatingOn?: string;
}

/**
 * How many entries the round deleted (upstream's metric counts these) and how many it set to expire; and how many
 * entries to drained endpoints it found (answered or still waiting for a reply), which the caller looks at again
 * after DRAINED_ENTRY_SECONDS: traffic through an expiring entry renews it, and a waiting one gets its reply.
 */
export interface CleanStaleResult {
  readonly deleted: number;
  readonly expiring: number;
  readonly drained: number;
}

/** The distinct endpoints (reply source IP:port) of these flows, for a log line. */
const endpointsOf = (flows: readonly ConntrackFlow[]): string[] => [
  ...new Set(flows.map((f) => `${f.reply.src}:${f.reply.sport}`)),
];

export async function cleanStaleEntries(o: CleanStaleEntriesInput): Promise<CleanStaleResult> {
  const start = o.clock.now();
  let entries: Awaited<ReturnType<ConntrackTable["listUDP"]>>;
  try {
    entries = await o.table.listUDP(o.family);
  } catch (error) {
    // Upstream gives up on this round without recording it; the next UDP change retries.
    o.logger.error("failed to list conntrack entries", { family: o.family, error });
    return { deleted: 0, expiring: 0, drained: 0 };
  }
  const stale = staleConntrackFlows(entries, o.services, o.endpoints);
  const drained =
    o.drainTerminatingOn === undefined
      ? { answered: [], waiting: [] }
      : drainedConntrackFlows(entries, o.services, o.endpoints, o.drainTerminatingOn);
  const expirable = expirableFlows(drained);
  const none = { deleted: 0, errors: [] };
  const r = stale.length === 0 ? none : await o.table.delete(o.family, stale);
  const d = expirable.length === 0 ? none : await o.table.expire(o.family, expirable, DRAINED_ENTRY_SECONDS);
  for (const error of r.errors) {
    o.logger.warn("deleting a stale conntrack entry failed", { family: o.family, error });
  }
  for (const error of d.errors) {
    o.logger.warn("shortening a drained conntrack entry's timeout failed", { family: o.family, error });
  }
  if (r.deleted > 0 || d.deleted > 0) {
    // What this round did to the table, to put beside `conntrack -E` when a flow is traced.
    o.logger.info("conntrack entries reconciled", {
      family: o.family,
      deleted: r.deleted,
      deletedTo: endpointsOf(stale),
      expiring: d.deleted,
      expiringTo: endpointsOf(expirable),
      waiting: drained.waiting.length,
    });
  }
  recordConntrackReconcile(o.metrics, o.family, (o.clock.now() - start) / 1000, r.deleted);
  return {
    deleted: r.deleted,
    expiring: d.deleted,
    drained: drained.answered.length + drained.waiting.length,
  };
}
