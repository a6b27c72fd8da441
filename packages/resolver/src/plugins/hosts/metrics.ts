import type { Gauge } from "prom-client";
import type { Metrics } from "../../metrics/metrics.js";

/** The hosts plugin's gauges, with CoreDNS v1.14.7's names and labels. */
export interface HostsMetrics {
  /** Entries (addresses per name plus reverse names) of file and Corefile together, per file path. */
  entries: Gauge;
  /** The modification time of the file last parsed, in epoch seconds; one value for all hosts plugins. */
  reloadTimestamp: Gauge;
}

/** Both are `first` across workers: every worker reads the same file, so a sum would count it N times. */
export function hostsMetrics(m: Metrics): HostsMetrics {
  return {
    entries: m.gauge(
      "coredns_hosts_entries",
      "The combined number of entries in hosts and Corefile.",
      ["hostsfile"],
      "first",
    ),
    reloadTimestamp: m.gauge(
      "coredns_hosts_reload_timestamp_seconds",
      "The timestamp of the last reload of hosts file.",
      [],
      "first",
    ),
  };
}
