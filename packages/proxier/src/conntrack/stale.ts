// Which UDP conntrack entries a sync has made stale. UDP has no connection teardown, so an
// entry created while traffic was DNATed to an endpoint (or rejected, with no endpoints)
// keeps steering packets of that "flow" the old way until it times out. kube-proxy deletes:
//  - entries DNATed to an endpoint that stopped serving, per service IP and NodePort;
//  - entries to a service IP or NodePort whose service port just got its first ready
//    endpoint (they were created while the traffic was being rejected);
//  - entries to the service IPs of UDP service ports that were removed.
import type { EndpointInfo } from "../model/endpoint.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import type { ServicePortInfo } from "../model/service-port.js";

/** One `conntrack -D` filter; every field set must match. */
export interface ConntrackFilter {
  readonly protocol: "udp" | "sctp";
  /** Original destination (a service IP). */
  readonly origDst?: string;
  /** Original destination port (a NodePort). */
  readonly origPort?: number;
  /** Where the entry was DNATed to (an endpoint IP). */
  readonly dstNat?: string;
}

export interface ProxyView {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
}

function serviceIPs(sp: ServicePortInfo): string[] {
  return [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerVIPs].filter((ip) => ip !== "");
}

const isUDP = (sp: ServicePortInfo | undefined): sp is ServicePortInfo => sp?.protocol === "UDP";

/** The filters to delete after moving from `before` to `after`, without duplicates. */
export function staleConntrackFilters(before: ProxyView, after: ProxyView): ConntrackFilter[] {
  const out = new Map<string, ConntrackFilter>();
  const add = (f: ConntrackFilter) => out.set(JSON.stringify(f), f);

  for (const [key, oldEps] of before.endpoints) {
    const sp = after.services.get(key) ?? before.services.get(key);
    if (!isUDP(sp)) continue;
    const still = (ep: EndpointInfo) =>
      (after.endpoints.get(key) ?? []).some((n) => n.ip === ep.ip && n.port === ep.port && n.serving);
    // An endpoint that was not serving had no traffic, so it left no entries.
    for (const ep of oldEps.filter((e) => e.serving && !still(e))) {
      for (const ip of serviceIPs(sp)) add({ protocol: "udp", origDst: ip, dstNat: ep.ip });
      if (sp.nodePort > 0) add({ protocol: "udp", origPort: sp.nodePort, dstNat: ep.ip });
    }
  }

  for (const [key, newEps] of after.endpoints) {
    const sp = after.services.get(key);
    if (!isUDP(sp)) continue;
    const hadReady = (before.endpoints.get(key) ?? []).some((e) => e.ready);
    if (hadReady || !newEps.some((e) => e.ready)) continue;
    for (const ip of serviceIPs(sp)) add({ protocol: "udp", origDst: ip });
    if (sp.nodePort > 0) add({ protocol: "udp", origPort: sp.nodePort });
  }

  for (const [key, sp] of before.services) {
    if (!isUDP(sp) || after.services.has(key)) continue;
    for (const ip of serviceIPs(sp)) add({ protocol: "udp", origDst: ip });
  }
  return [...out.values()];
}
