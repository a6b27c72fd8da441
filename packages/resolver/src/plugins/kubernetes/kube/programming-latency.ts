import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { Metrics } from "../../../metrics/metrics.js";
import { isHeadless } from "../cluster-view.js";
import { TRIGGER_TIME_ANNOTATION } from "./slim.js";

/** 1 ms doubling to about 17 minutes, as CoreDNS's histogram. */
const BUCKETS = Array.from({ length: 20 }, (_, i) => 0.001 * 2 ** i);

/**
 * `coredns_kubernetes_dns_programming_duration_seconds{service_kind}`: from the moment the EndpointSlice
 * controller saw a change (its trigger-time annotation) to the moment this server holds it. It trusts
 * the controller's clock, so skew between nodes shows up here.
 */
export class ProgrammingLatency {
  private readonly histogram;

  constructor(
    metrics: Metrics,
    private readonly now: () => number,
  ) {
    this.histogram = metrics.histogram(
      "coredns_kubernetes_dns_programming_duration_seconds",
      "Histogram of the time (in seconds) it took to program a dns instance.",
      ["service_kind"],
      BUCKETS,
    );
  }

  /**
   * Records one slice that just reached the cache. Slices without the annotation were not written by
   * the controller, and an unknown Service makes the kind unknowable; both are skipped, as in CoreDNS.
   */
  record(slice: EndpointSlice, service: Service | undefined): void {
    const stamp = slice.metadata?.annotations?.[TRIGGER_TIME_ANNOTATION];
    if (!stamp || !service) return;
    const at = Date.parse(stamp);
    if (Number.isNaN(at)) return;
    const kind = isHeadless(service) ? "headless_with_selector" : "cluster_ip";
    this.histogram.observe({ service_kind: kind }, Math.max(0, (this.now() - at) / 1000));
  }
}
