import type { Metrics } from "../../metrics/metrics.js";
import type { CounterFamily } from "../../metrics/series.js";

/** The acl plugin's counters, named, described and labelled as in CoreDNS v1.14.7. */
export interface AclMetrics {
  blocked: CounterFamily;
  filtered: CounterFamily;
  allowed: CounterFamily;
  dropped: CounterFamily;
}

export function aclMetrics(m: Metrics): AclMetrics {
  const zoned = ["server", "zone", "view"];
  return {
    blocked: m.counter("coredns_acl_blocked_requests_total", "Counter of DNS requests being blocked.", zoned),
    filtered: m.counter(
      "coredns_acl_filtered_requests_total",
      "Counter of DNS requests being filtered.",
      zoned,
    ),
    // Upstream counts allowed queries per server only: they are not tied to one rule's zone.
    allowed: m.counter("coredns_acl_allowed_requests_total", "Counter of DNS requests being allowed.", [
      "server",
      "view",
    ]),
    dropped: m.counter("coredns_acl_dropped_requests_total", "Counter of DNS requests being dropped.", zoned),
  };
}
