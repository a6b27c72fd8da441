import { Metrics } from "../../metrics/metrics.js";
import type { Setup } from "../../plugin/setup.js";
import { onlyOnce } from "../../plugin/setup.js";
import { CacheHandler } from "./handler.js";
import { cacheMetrics } from "./metrics.js";
import { parseCache } from "./options.js";

export interface CacheDeps {
  /** Epoch milliseconds; injectable so tests control expiry. */
  now?: () => number;
  /** Where every plugin registers its metrics; one per resolver. */
  metrics?: Metrics;
}

export const setupCache: Setup<CacheDeps> = (ctx) => {
  const opts = parseCache(onlyOnce(ctx, "cache"), ctx.blockZones);
  const now = ctx.deps.now ?? Date.now;
  const metrics = cacheMetrics(ctx.deps.metrics ?? new Metrics());
  return { plugin: (next) => new CacheHandler(next, opts, now, metrics) };
};
