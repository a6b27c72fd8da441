import type { Metrics } from "../../metrics/metrics.js";
import type { CounterFamily } from "../../metrics/series.js";

/** The template plugin's counters, with CoreDNS v1.14.7's names, help and labels. */
export interface TemplateMetrics {
  matches: CounterFamily;
  templateFailures: CounterFamily;
  rrFailures: CounterFamily;
}

const FAILURE_LABELS = ["server", "zone", "view", "class", "type", "section", "template"];

export function templateMetrics(m: Metrics): TemplateMetrics {
  return {
    matches: m.counter("coredns_template_matches_total", "Counter of template regex matches.", [
      "server",
      "zone",
      "view",
      "class",
      "type",
    ]),
    templateFailures: m.counter(
      "coredns_template_template_failures_total",
      "Counter of go template failures.",
      FAILURE_LABELS,
    ),
    rrFailures: m.counter(
      "coredns_template_rr_failures_total",
      "Counter of mis-templated RRs.",
      FAILURE_LABELS,
    ),
  };
}
