import type { Gauge } from "prom-client";
import type { Metrics } from "../../metrics/metrics.js";
import type { CounterFamily } from "../../metrics/series.js";

/** The cache plugin's metric families (CoreDNS v1.14.7 names and labels). */
export interface CacheMetrics {
  entries: Gauge;
  requests: CounterFamily;
  hits: CounterFamily;
  misses: CounterFamily;
  prefetch: CounterFamily;
  drops: CounterFamily;
  servedStale: CounterFamily;
  evictions: CounterFamily;
}

export function cacheMetrics(m: Metrics): CacheMetrics {
  const typed = ["server", "type", "zones", "view"];
  const plain = ["server", "zones", "view"];
  return {
    entries: m.gauge("coredns_cache_entries", "Entries held, per cache type.", typed),
    requests: m.counter("coredns_cache_requests_total", "Lookups made in the cache.", plain),
    hits: m.counter("coredns_cache_hits_total", "Lookups answered from the cache, per cache type.", typed),
    misses: m.counter(
      "coredns_cache_misses_total",
      "Lookups the cache could not answer (deprecated: requests minus hits).",
      plain,
    ),
    prefetch: m.counter("coredns_cache_prefetch_total", "Entries refreshed ahead of expiry.", plain),
    drops: m.counter(
      "coredns_cache_drops_total",
      "Replies not stored because they did not match their query.",
      plain,
    ),
    servedStale: m.counter(
      "coredns_cache_served_stale_total",
      "Queries answered with an expired entry.",
      plain,
    ),
    evictions: m.counter(
      "coredns_cache_evictions_total",
      "Entries pushed out to make room, per cache type.",
      typed,
    ),
  };
}
