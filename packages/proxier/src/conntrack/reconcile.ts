// Which listed UDP conntrack entries are stale, computed from the current service and
// endpoint maps alone (kube-proxy's reconciler since 1.31, pkg/proxy/conntrack/cleanup.go).
// UDP has no teardown, so an entry made while traffic was DNATed to an endpoint keeps
// steering that flow there after the rules changed; one-way flows (statsd, syslog) refresh
// its timeout with every packet and would never recover. Rather than diffing two states,
// every entry aimed at a UDP service frontend is checked against that service port's
// serving endpoints, so entries left by a restart or a missed sync are caught as well.

import { normalizeIP } from "@switchyard/basics";
import { endpointString } from "../model/endpoint.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { categorizeEndpoints } from "../model/topology.js";
import type { ConntrackFlow } from "./flow.js";

/** "IP:port" (v6 in brackets); callers pass canonical IP text so both sides compare equal. */
const hostPort = (ip: string, port: number): string =>
  ip.includes(":") ? `[${ip}]:${port}` : `${ip}:${port}`;

/** Service and endpoint IPs are canonical already; normalizing once per service is cheap insurance. */
const canonical = (ip: string): string => normalizeIP(ip) ?? ip;

interface Frontends {
  /** Service IP:port (ClusterIP, external IPs, LB VIPs) → serving endpoints' IP:port. */
  readonly byIP: Map<string, ReadonlySet<string>>;
  /** NodePort → serving endpoints' IP:port. */
  readonly byNodePort: Map<number, ReadonlySet<string>>;
}

function udpFrontends(services: ServicePortMap, endpoints: EndpointsMap): Frontends {
  const byIP = new Map<string, ReadonlySet<string>>();
  const byNodePort = new Map<number, ReadonlySet<string>>();
  for (const [key, sp] of services) {
    if (sp.protocol !== "UDP") continue;
    // Serving, not ready: a terminating endpoint still answers its existing flows, and
    // traffic policy and topology only steer new flows, as they do for TCP.
    const serving = new Set(
      (endpoints.get(key) ?? []).filter((ep) => ep.serving).map((ep) => hostPort(canonical(ep.ip), ep.port)),
    );
    // A port without serving endpoints is kept with an empty set: its old flows were DNATed
    // before the reject rule (which matches the service IP) could see them.
    for (const ip of [sp.clusterIP, ...sp.loadBalancerVIPs, ...sp.externalIPs]) {
      if (ip !== "") byIP.set(hostPort(canonical(ip), sp.port), serving);
    }
    // NodePort entries match on the port alone, so with no serving endpoints every UDP
    // flow to that port number (kube-proxy's or not) would go; upstream skips that case.
    if (sp.nodePort > 0 && serving.size > 0) byNodePort.set(sp.nodePort, serving);
  }
  return { byIP, byNodePort };
}

/**
 * The entries to delete: UDP entries whose original destination is a UDP service IP:port,
 * or whose original destination port is a UDP NodePort, and whose reply source (the
 * endpoint that answers) is not one of that service port's serving endpoints.
 */
export function staleConntrackFlows(
  entries: readonly ConntrackFlow[],
  services: ServicePortMap,
  endpoints: EndpointsMap,
): ConntrackFlow[] {
  const { byIP, byNodePort } = udpFrontends(services, endpoints);
  return entries.filter((entry) => {
    if (entry.protocol !== "udp") return false;
    const answeredBy = hostPort(entry.reply.src, entry.reply.sport);
    const viaIP = byIP.get(hostPort(entry.orig.dst, entry.orig.dport));
    if (viaIP && !viaIP.has(answeredBy)) return true;
    const viaNodePort = byNodePort.get(entry.orig.dport);
    return viaNodePort !== undefined && !viaNodePort.has(answeredBy);
  });
}

/** The UDP entries to terminating endpoints the rules left: answered ones, and ones still waiting for a reply. */
export interface DrainedFlows {
  readonly answered: ConntrackFlow[];
  readonly waiting: ConntrackFlow[];
}

/**
 * Entries of finished exchanges with endpoints that are terminating and that this node's rules no longer choose
 * for new flows (a ready endpoint exists for them): the UDP entries, aimed at a UDP service frontend as above, whose
 * reply came from such an endpoint and has been seen. Upstream keeps these until the endpoint stops serving, which
 * it learns only after the pod exits; meanwhile a client's new socket that the kernel gives the port of an earlier
 * lookup (its entry lives 30 s) meets the old entry instead of the rules, and once the pod has exited that lookup
 * is lost. Entries still waiting for their reply are left to get it and returned apart (`waiting`): the caller looks
 * again a moment later (proxier.ts), since no endpoint change may come to start another round before the pod exits.
 * The caller lets the answered ones expire rather than deleting them (clean-stale.ts says why).
 */
export function drainedConntrackFlows(
  entries: readonly ConntrackFlow[],
  services: ServicePortMap,
  endpoints: EndpointsMap,
  nodeName: string,
): DrainedFlows {
  const byIP = new Map<string, ReadonlySet<string>>();
  const byNodePort = new Map<number, ReadonlySet<string>>();
  for (const [key, sp] of services) {
    if (sp.protocol !== "UDP") continue;
    const eps = endpoints.get(key) ?? [];
    // Topology and node labels decide only among ready endpoints; whether a terminating one is still chosen
    // (nothing ready for the policy) does not depend on them.
    const chosen = new Set(
      categorizeEndpoints(eps, sp, nodeName, {}).allReachableEndpoints.map(endpointString),
    );
    const drained = new Set(
      eps
        .filter((ep) => ep.terminating && ep.serving && !chosen.has(endpointString(ep)))
        .map((ep) => hostPort(canonical(ep.ip), ep.port)),
    );
    if (drained.size === 0) continue;
    for (const ip of [sp.clusterIP, ...sp.loadBalancerVIPs, ...sp.externalIPs]) {
      if (ip !== "") byIP.set(hostPort(canonical(ip), sp.port), drained);
    }
    if (sp.nodePort > 0) byNodePort.set(sp.nodePort, drained);
  }
  const drained: DrainedFlows = { answered: [], waiting: [] };
  if (byIP.size === 0 && byNodePort.size === 0) return drained;
  for (const entry of entries) {
    if (entry.protocol !== "udp") continue;
    const answeredBy = hostPort(entry.reply.src, entry.reply.sport);
    const toDrained =
      byIP.get(hostPort(entry.orig.dst, entry.orig.dport))?.has(answeredBy) === true ||
      byNodePort.get(entry.orig.dport)?.has(answeredBy) === true;
    if (toDrained) (entry.unreplied ? drained.waiting : drained.answered).push(entry);
  }
  return drained;
}

/**
 * The answered entries it is safe to shorten now: those of endpoints (per service address and port, the groups one
 * `conntrack -U` filter covers) with no entry still waiting for its reply. `conntrack -U` cannot filter on status:
 * given `--status SEEN_REPLY` it sets the bit, so a waiting entry in the group was marked answered and given the
 * short timeout with its query still out, and an answer later than that timeout came back untranslated and was
 * dropped. Once the rules no longer choose an endpoint no new entry to it can be made, so the waiting ones only get
 * their answers or expire: the caller looks again a moment later (they count as drained) and shortens the group then.
 */
export function expirableFlows(drained: DrainedFlows): ConntrackFlow[] {
  const key = (f: ConntrackFlow) =>
    `${f.protocol}#${hostPort(f.orig.dst, f.orig.dport)}#${hostPort(f.reply.src, f.reply.sport)}`;
  const busy = new Set(drained.waiting.map(key));
  return drained.answered.filter((f) => !busy.has(key(f)));
}
