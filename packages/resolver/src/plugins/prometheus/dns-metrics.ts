import type { Metrics } from "../../metrics/metrics.js";
import { SIZE_BUCKETS, TIME_BUCKETS } from "../../metrics/metrics.js";
import type { OutcomeObserver } from "../../server/dispatch.js";
import { rcodeName, typeName } from "../../wire/constants.js";

/** Query types CoreDNS counts by name; anything else is counted as "other". */
const NAMED_TYPES = new Set([
  "A",
  "AAAA",
  "NS",
  "PTR",
  "SOA",
  "CNAME",
  "MX",
  "TXT",
  "SRV",
  "NAPTR",
  "DS",
  "DNSKEY",
  "RRSIG",
  "NSEC",
  "NSEC3",
  "HINFO",
  "CAA",
  "IXFR",
  "AXFR",
  "ANY",
  "HTTPS",
  "SVCB",
]);

/**
 * The server-wide families (coredns_dns_*), fed from every reply a server block sends. Queries no block
 * took count under zone "dropped", as in CoreDNS.
 */
export function dnsObserver(m: Metrics): OutcomeObserver {
  const requests = m.counter("coredns_dns_requests_total", "Queries received.", [
    "server",
    "zone",
    "view",
    "proto",
    "family",
    "type",
  ]);
  const responses = m.counter(
    "coredns_dns_responses_total",
    "Replies sent, by rcode and the plugin that wrote them.",
    ["server", "zone", "view", "rcode", "plugin"],
  );
  const duration = m.histogram(
    "coredns_dns_request_duration_seconds",
    "Time from receiving a query to having its reply.",
    ["server", "zone", "view"],
    TIME_BUCKETS,
  );
  const requestSize = m.histogram(
    "coredns_dns_request_size_bytes",
    "Size of queries in bytes.",
    ["server", "zone", "view", "proto"],
    SIZE_BUCKETS,
  );
  const responseSize = m.histogram(
    "coredns_dns_response_size_bytes",
    "Size of replies in bytes.",
    ["server", "zone", "view", "proto"],
    SIZE_BUCKETS,
  );
  return (out, info) => {
    const q = out.request?.question[0];
    if (!out.request || !q) return;
    const where = { server: info.server, zone: out.zone, view: "" };
    const type = typeName(q.type);
    requests.inc({
      ...where,
      proto: info.transport,
      family: info.remote.family === "IPv6" ? "2" : "1",
      type: NAMED_TYPES.has(type) ? type : "other",
    });
    responses.inc({ ...where, rcode: rcodeName(out.rcode ?? 2), plugin: out.plugin ?? "" });
    duration.observe(where, out.duration);
    requestSize.observe({ ...where, proto: info.transport }, out.requestSize);
    responseSize.observe({ ...where, proto: info.transport }, out.reply?.length ?? 0);
  };
}
