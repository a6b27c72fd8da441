import type { Metrics } from "../../metrics/metrics.js";
import { TIME_BUCKETS } from "../../metrics/metrics.js";
import type { CounterFamily, CounterSeries, HistogramFamily, HistogramSeries } from "../../metrics/series.js";
import { rcodeName } from "../../wire/constants.js";

export interface ForwardMetrics {
  duration: HistogramFamily;
  connCacheHits: CounterFamily;
  connCacheMisses: CounterFamily;
  healthcheckFailures: CounterFamily;
  healthcheckBroken: CounterFamily;
  maxConcurrentRejects: CounterFamily;
}

export function forwardMetrics(m: Metrics): ForwardMetrics {
  return {
    duration: m.histogram(
      "coredns_proxy_request_duration_seconds",
      "Histogram of the time each request took.",
      ["proxy_name", "to", "rcode"],
      TIME_BUCKETS,
    ),
    connCacheHits: m.counter(
      "coredns_proxy_conn_cache_hits_total",
      "Counter of connection cache hits per upstream and protocol.",
      ["proxy_name", "to", "proto"],
    ),
    connCacheMisses: m.counter(
      "coredns_proxy_conn_cache_misses_total",
      "Counter of connection cache misses per upstream and protocol.",
      ["proxy_name", "to", "proto"],
    ),
    healthcheckFailures: m.counter(
      "coredns_proxy_healthcheck_failures_total",
      "Counter of the number of failed healthchecks.",
      ["proxy_name", "to"],
    ),
    healthcheckBroken: m.counter(
      "coredns_forward_healthcheck_broken_total",
      "Counter of the number of complete failures of the healthchecks.",
    ),
    maxConcurrentRejects: m.counter(
      "coredns_forward_max_concurrent_rejects_total",
      "Counter of the number of queries rejected because the concurrent queries were at maximum.",
    ),
  };
}

const PROXY_NAME = "forward";

/**
 * The per-query series of one upstream, looked up the first time each is fed and kept: a query then bumps
 * numbers instead of building a label set and hashing it. A series appears in /metrics only once fed, as in
 * CoreDNS.
 */
export class UpstreamSeries {
  /** By proto and reuse: udp opened, udp reused, tcp opened, tcp reused. */
  private readonly taken: (CounterSeries | undefined)[] = [];
  private readonly durations: (HistogramSeries | undefined)[] = [];
  /** `connection("udp", reused)` as a callback made once, not per query. */
  readonly udpTaken = (reused: boolean): void => this.connection("udp", reused);

  constructor(
    private readonly metrics: ForwardMetrics,
    private readonly to: string,
  ) {}

  /** A connection taken from the cache (`reused`) or opened. */
  connection(proto: "udp" | "tcp", reused: boolean): void {
    const key = (proto === "tcp" ? 2 : 0) + (reused ? 1 : 0);
    let s = this.taken[key];
    if (!s) {
      const family = reused ? this.metrics.connCacheHits : this.metrics.connCacheMisses;
      s = family.series({ proxy_name: PROXY_NAME, to: this.to, proto });
      this.taken[key] = s;
    }
    s.value++;
  }

  /** One exchange that got a reply with `rcode`, after `seconds`. */
  duration(rcode: number, seconds: number): void {
    let s = this.durations[rcode];
    if (!s) {
      s = this.metrics.duration.series({ proxy_name: PROXY_NAME, to: this.to, rcode: rcodeName(rcode) });
      this.durations[rcode] = s;
    }
    s.observe(seconds);
  }
}
