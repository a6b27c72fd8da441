// Which socket-balanced UDP flows a sync left without their backend: kube-proxy's stale-flow rule
// (conntrack/reconcile.ts) for sockets. Under kube-proxy a UDP flow DNATed to an endpoint keeps going there through
// its conntrack entry until the entry is deleted; in ebpf mode a connected UDP socket was itself pointed at the
// backend when it connected, and keeps sending there until the socket is ended (bpf/sock-destroy.c).
//
// The rules are the reconciler's: UDP service ports only; every frontend the port answers on; a backend keeps its
// flows while it is a serving endpoint of the port (terminating but serving ones still answer). What differs is
// what is judged. The reconciler reads every conntrack entry and checks it against the current maps alone; no one
// can list sockets by the frontend they asked for, so here the previous sync's state is compared with this one's:
// a flow is stale when the port served it from a backend before and no port of that frontend serves it from that
// backend now. A frontend that went with its Service counts as serving nothing (its sockets end too, which the
// reconciler cannot see: a deleted frontend is no longer among its entries' destinations).

import { hostPort, normalizeIP } from "@switchyard/basics";
import type { EndpointInfo } from "../model/endpoint.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import type { ServicePortInfo } from "../model/service-port.js";
import type { RecordOf } from "./codec.js";
import { frontendsOf } from "./frontends.js";
import type { staleFlowKey } from "./layout.js";

/** A frontend and a backend of it, as lb*_stale_flows keys them: the sockets sent from one to the other. */
export type StaleFlow = RecordOf<typeof staleFlowKey>;

/** The maps one sync programmed. */
export interface ProgrammedMaps {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
}

/** The frontends (address and port) a UDP port answers on; none for another protocol. */
function udpFrontends(sp: ServicePortInfo, nodePortIPs: readonly string[]) {
  return sp.protocol === "UDP" ? frontendsOf(sp, nodePortIPs) : [];
}

const servingOf = (eps: readonly EndpointInfo[] | undefined): EndpointInfo[] =>
  (eps ?? []).filter((ep) => ep.serving);

/**
 * The UDP ports of `before` whose Service port or endpoints `after` does not hold as the very same objects. The
 * trackers hand an unchanged Service's records from map to map, so only these can have lost a backend; a port
 * judged changed that is not costs a little time, never a socket.
 */
function changedUDPPorts(before: ProgrammedMaps, after: ProgrammedMaps): string[] {
  const changed: string[] = [];
  for (const [key, sp] of before.services) {
    if (sp.protocol !== "UDP") continue;
    if (after.services.get(key) === sp && after.endpoints.get(key) === before.endpoints.get(key)) continue;
    changed.push(key);
  }
  return changed;
}

/**
 * The UDP ports of `state` answering on each of these frontends ("address:port"): an external IP or load-balancer
 * IP may be two Services'. Only ports with one of the frontends' addresses are looked at closely, so that a change
 * to one Service does not cost a pass over every port's frontends.
 */
function portsAnswering(
  state: ProgrammedMaps,
  nodePortIPs: readonly string[],
  frontends: ReadonlySet<string>,
  addresses: ReadonlySet<string>,
): Map<string, string[]> {
  const nodePorts = nodePortIPs.some((ip) => addresses.has(ip));
  const ports = new Map<string, string[]>();
  for (const [key, sp] of state.services) {
    if (sp.protocol !== "UDP") continue;
    const mayAnswer =
      addresses.has(sp.clusterIP) ||
      (nodePorts && sp.nodePort > 0) ||
      sp.externalIPs.some((ip) => addresses.has(ip)) ||
      sp.loadBalancerVIPs.some((ip) => addresses.has(ip));
    if (!mayAnswer) continue;
    for (const f of frontendsOf(sp, nodePortIPs)) {
      const name = hostPort(f.address, f.port);
      if (!frontends.has(name)) continue;
      const list = ports.get(name);
      if (list) list.push(key);
      else ports.set(name, [key]);
    }
  }
  return ports;
}

/** The backends ("address:port") serving one frontend in `state`, through any of `ports`. */
function servingThrough(state: ProgrammedMaps, ports: readonly string[] = []): Set<string> {
  const serving = new Set<string>();
  for (const key of ports) {
    for (const ep of servingOf(state.endpoints.get(key))) serving.add(hostPort(ep.ip, ep.port));
  }
  return serving;
}

/** What a changed port had: its frontends, and the backends that served them. */
interface Lost {
  readonly frontends: readonly { readonly address: string; readonly port: number; readonly name: string }[];
  readonly had: readonly EndpointInfo[];
}

/**
 * The flows `before` served and `after` no longer serves, each once, ordered by frontend then backend.
 * `nodePortIPs`: the addresses NodePorts answer on (EBPFOptions.nodePortIPs), since a socket balanced through a
 * NodePort asked for one of them. Service and endpoint addresses come canonical from the trackers; these may not.
 */
export function staleFlows(
  nodePortIPs: readonly string[],
  before: ProgrammedMaps,
  after: ProgrammedMaps,
): StaleFlow[] {
  const nodeIPs = nodePortIPs.map((ip) => normalizeIP(ip) ?? ip);
  const lost: Lost[] = [];
  for (const key of changedUDPPorts(before, after)) {
    const had = servingOf(before.endpoints.get(key));
    if (had.length === 0) continue;
    const frontends = udpFrontends(before.services.get(key) as ServicePortInfo, nodeIPs);
    lost.push({ had, frontends: frontends.map((f) => ({ ...f, name: hostPort(f.address, f.port) })) });
  }
  if (lost.length === 0) return [];
  const names = new Set(lost.flatMap((l) => l.frontends.map((f) => f.name)));
  const addresses = new Set(lost.flatMap((l) => l.frontends.map((f) => f.address)));
  const answering = portsAnswering(after, nodeIPs, names, addresses);
  const stale = new Map<string, StaleFlow>();
  for (const { frontends, had } of lost) {
    for (const f of frontends) {
      const still = servingThrough(after, answering.get(f.name));
      for (const ep of had) {
        if (still.has(hostPort(ep.ip, ep.port))) continue;
        const flow = {
          frontendAddress: f.address,
          frontendPort: f.port,
          backendAddress: ep.ip,
          backendPort: ep.port,
        };
        stale.set(flowName(flow), flow);
      }
    }
  }
  return [...stale.entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([, flow]) => flow);
}

/** "frontend -> backend", both as address:port: a flow in logs, and its identity here. */
export function flowName(flow: StaleFlow): string {
  return `${hostPort(flow.frontendAddress, flow.frontendPort)} -> ${hostPort(flow.backendAddress, flow.backendPort)}`;
}
