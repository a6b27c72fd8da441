import type { Metrics } from "../../metrics/metrics.js";
import type { CounterFamily } from "../../metrics/series.js";

/** `coredns_autopath_success_total{server}`, with CoreDNS v1.14.7's name and help. */
export function autoPathSuccess(m: Metrics): CounterFamily {
  return m.counter("coredns_autopath_success_total", "Counter of requests that did autopath.", ["server"]);
}
