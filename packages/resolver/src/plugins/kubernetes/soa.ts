import type { ResourceRecord } from "../../wire/message.js";
import { fqdn, joinName } from "../../wire/name.js";
import type { ClusterView } from "./cluster-view.js";
import type { KubernetesOptions } from "./options.js";

/**
 * The zone SOA with CoreDNS's values: `ns.dns.<zone>. hostmaster.<zone>.`, serial = Unix time of the
 * last cluster change, refresh 7200, retry 1800, expire 86400, minimum = ttl, record TTL = min(ttl, 300).
 * `zone` keeps the query's spelling.
 */
export function soaRecord(view: ClusterView, opts: KubernetesOptions, zone: string): ResourceRecord {
  return {
    name: fqdn(zone),
    type: "SOA",
    class: 1,
    ttl: Math.min(opts.ttl, 300),
    data: {
      mname: joinName("ns.dns", zone),
      rname: joinName("hostmaster", zone),
      serial: view.modified() >>> 0,
      refresh: 7200,
      retry: 1800,
      expire: 86400,
      minimum: opts.ttl,
    },
  };
}
