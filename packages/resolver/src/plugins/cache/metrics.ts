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
    entries: m.gauge("coredns_cache_entries", "The number of elements in the cache.", typed),
    requests: m.counter("coredns_cache_requests_total", "The count of cache requests.", plain),
    hits: m.counter("coredns_cache_hits_total", "The count of cache hits.", typed),
    misses: m.counter(
      "coredns_cache_misses_total",
      "The count of cache misses. Deprecated, derive misses from cache hits/requests counters.",
      plain,
    ),
    prefetch: m.counter(
      "coredns_cache_prefetch_total",
      "The number of times the cache has prefetched a cached item.",
      plain,
    ),
    drops: m.counter(
      "coredns_cache_drops_total",
      "The number responses that are not cached, because the reply is malformed.",
      plain,
    ),
    servedStale: m.counter(
      "coredns_cache_served_stale_total",
      "The number of requests served from stale cache entries.",
      plain,
    ),
    evictions: m.counter("coredns_cache_evictions_total", "The count of cache evictions.", typed),
  };
}
