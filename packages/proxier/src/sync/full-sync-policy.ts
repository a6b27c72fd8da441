// When a sync must rewrite everything instead of only what changed. kube-proxy does a full
// sync at start-up, after any failed sync (the change trackers were already drained, so the
// partial-sync bookkeeping is lost), when the node's topology labels change, and when the
// last full sync is more than an hour old (repairs drift that a partial sync cannot see).
import { FULL_SYNC_PERIOD_MS } from "./sync-periods.js";

export class FullSyncPolicy {
  readonly #periodMs: number;
  #needFullSync = true;
  #lastFullSync = Number.NEGATIVE_INFINITY;

  constructor(periodMs = FULL_SYNC_PERIOD_MS) {
    this.#periodMs = periodMs;
  }

  /** Whether the sync starting at `now` must be full. */
  fullSyncDue(now: number): boolean {
    return this.#needFullSync || now - this.#lastFullSync > this.#periodMs;
  }

  /** Forces the next sync to be full (node labels changed, rules were flushed behind our back). */
  forceFullSync(): void {
    this.#needFullSync = true;
  }

  /** Records a sync's outcome. */
  synced(outcome: { readonly full: boolean; readonly ok: boolean; readonly now: number }): void {
    if (!outcome.ok) {
      this.#needFullSync = true;
      return;
    }
    if (outcome.full) {
      this.#needFullSync = false;
      this.#lastFullSync = outcome.now;
    }
  }
}
