import type { Metrics } from "../../metrics/metrics.js";
import { SIZE_BUCKETS, TIME_BUCKETS } from "../../metrics/metrics.js";
import type { CounterSeries, HistogramSeries } from "../../metrics/series.js";
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
  const requests = m.counter(
    "coredns_dns_requests_total",
    "Counter of DNS requests made per zone, protocol and family.",
    ["server", "zone", "view", "proto", "family", "type"],
  );
  const responses = m.counter("coredns_dns_responses_total", "Counter of response status codes.", [
    "server",
    "zone",
    "view",
    "rcode",
    "plugin",
  ]);
  const duration = m.histogram(
    "coredns_dns_request_duration_seconds",
    "Histogram of the time (in seconds) each request took per zone.",
    ["server", "zone", "view"],
    TIME_BUCKETS,
  );
  const requestSize = m.histogram(
    "coredns_dns_request_size_bytes",
    "Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.",
    ["server", "zone", "view", "proto"],
    SIZE_BUCKETS,
  );
  const responseSize = m.histogram(
    "coredns_dns_response_size_bytes",
    "Size of the returned response in bytes.",
    ["server", "zone", "view", "proto"],
    SIZE_BUCKETS,
  );
  // The series one kind of query feeds, looked up once per distinct key.
  interface Fed {
    requests: CounterSeries;
    duration: HistogramSeries;
    requestSize: HistogramSeries;
    responseSize: HistogramSeries;
  }
  // Keyed by server, then zone, then small numbers: no key string is built per query.
  const fed = new Map<string, Map<string, Map<number, Fed>>>();
  const answered = new Map<string, Map<string, Map<string, Map<number, CounterSeries>>>>();
  const panics = m.counter("coredns_panics_total", "A metrics that counts the number of panics.");
  const feed = (server: string, zone: string, transport: string, family: string, qtype: number): Fed => {
    const where = { server, zone, view: "" };
    const type = typeName(qtype);
    const sized = { ...where, proto: transport };
    return {
      requests: requests.series({ ...sized, family, type: NAMED_TYPES.has(type) ? type : "other" }),
      duration: duration.series(where),
      requestSize: requestSize.series(sized),
      responseSize: responseSize.series(sized),
    };
  };
  return (out, info) => {
    if (out.panic) panics.inc();
    const qtype = out.qtype ?? out.request?.question[0]?.type;
    if (qtype === undefined) return;
    const v6 = info.remote.family === "IPv6";
    const byKind = inner(inner(fed, info.server), out.zone);
    const kind = qtype * 4 + (info.transport === "tcp" ? 2 : 0) + (v6 ? 1 : 0);
    let f = byKind.get(kind);
    if (!f) {
      f = feed(info.server, out.zone, info.transport, v6 ? "2" : "1", qtype);
      byKind.set(kind, f);
    }
    const rcode = out.rcode ?? 2;
    const plugin = out.plugin ?? "";
    const byRcode = inner(inner(inner(answered, info.server), out.zone), plugin);
    let r = byRcode.get(rcode);
    if (!r) {
      r = responses.series({
        server: info.server,
        zone: out.zone,
        view: "",
        rcode: rcodeName(rcode),
        plugin,
      });
      byRcode.set(rcode, r);
    }
    f.requests.value++;
    r.value++;
    f.duration.observe(out.duration);
    f.requestSize.observe(out.requestSize);
    f.responseSize.observe(out.reply?.length ?? 0);
  };
}

/** The map under `key`, made on first use. */
function inner<K, V>(outer: Map<string, Map<K, V>>, key: string): Map<K, V> {
  let m = outer.get(key);
  if (!m) {
    m = new Map();
    outer.set(key, m);
  }
  return m;
}
