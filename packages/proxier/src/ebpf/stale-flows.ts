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

const canonical = (ip: string): string => normalizeIP(ip) ?? ip;

/** The frontends (canonical address and port) a UDP port answers on; none for another protocol. */
function udpFrontends(sp: ServicePortInfo, nodePortIPs: readonly string[]) {
  if (sp.protocol !== "UDP") return [];
  return frontendsOf(sp, nodePortIPs).map((f) => ({ address: canonical(f.address), port: f.port }));
}

const servingOf = (eps: readonly EndpointInfo[] | undefined): EndpointInfo[] =>
  (eps ?? []).filter((ep) => ep.serving);

/** Frontend "address:port" → "address:port" of the backends serving it, over every UDP port that has it. */
function servingByFrontend(state: ProgrammedMaps, nodePortIPs: readonly string[]): Map<string, Set<string>> {
  const byFrontend = new Map<string, Set<string>>();
  for (const [key, sp] of state.services) {
    const frontends = udpFrontends(sp, nodePortIPs);
    if (frontends.length === 0) continue;
    const serving = servingOf(state.endpoints.get(key)).map((ep) => hostPort(canonical(ep.ip), ep.port));
    for (const f of frontends) {
      const name = hostPort(f.address, f.port);
      const set = byFrontend.get(name) ?? new Set<string>();
      for (const backend of serving) set.add(backend);
      byFrontend.set(name, set);
    }
  }
  return byFrontend;
}

/**
 * The flows `before` served and `after` no longer serves, each once, ordered by frontend then backend.
 * `nodePortIPs`: the addresses NodePorts answer on (EBPFOptions.nodePortIPs), since a socket balanced through
 * a NodePort asked for one of them.
 */
export function staleFlows(
  nodePortIPs: readonly string[],
  before: ProgrammedMaps,
  after: ProgrammedMaps,
): StaleFlow[] {
  const nodeIPs = nodePortIPs.map(canonical);
  const kept = servingByFrontend(after, nodeIPs);
  const stale = new Map<string, StaleFlow>();
  for (const [key, sp] of before.services) {
    const frontends = udpFrontends(sp, nodeIPs);
    const had = frontends.length === 0 ? [] : servingOf(before.endpoints.get(key));
    for (const f of frontends) {
      const still = kept.get(hostPort(f.address, f.port));
      for (const ep of had) {
        const backend = { address: canonical(ep.ip), port: ep.port };
        if (still?.has(hostPort(backend.address, backend.port))) continue;
        const flow = {
          frontendAddress: f.address,
          frontendPort: f.port,
          backendAddress: backend.address,
          backendPort: backend.port,
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
