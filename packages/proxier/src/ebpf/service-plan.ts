// What one Service port asks of the maps: for each of its frontends, the backends each scope balances over and
// the flags, and the backends themselves. Every decision comes from categorizeEndpoints and trafficPolicyPlan,
// as the nftables renderer takes them, so the two modes send a packet to the same endpoints.
//
// Two scopes per frontend:
// - internal: traffic started on this node (pods and host), balanced when the socket connects. A ClusterIP
//   follows the internal route (internalTrafficPolicy). A NodePort, external IP or load-balancer frontend takes
//   every cluster endpoint: kube-proxy short-circuits pod and host traffic to those to the cluster policy chain
//   whatever externalTrafficPolicy says.
// - external: traffic from outside the node, for the tc programs. External frontends follow the external route
//   (EXTERNAL_LOCAL when it is Local); a routed ClusterIP follows the internal route, as kube-proxy sends a
//   ClusterIP to its internal policy chain whatever the source (and masquerades a source from outside).

import type { EndpointInfo } from "../model/endpoint.js";
import type { ServicePortInfo } from "../model/service-port.js";
import { categorizeEndpoints } from "../model/topology.js";
import {
  type NoEndpointsVerdict,
  type TrafficPolicyPlan,
  type TrafficRoute,
  trafficPolicyPlan,
} from "../model/traffic-policy.js";
import { addressName, protocolNumber } from "./contents.js";
import { type Frontend, frontendsOf, KIND_FLAG } from "./frontends.js";
import { backendFlags, serviceFlags } from "./layout.js";
import type { EBPFOptions } from "./options.js";

/** A backend as the backends map holds it; its name is addressName of it. */
export interface BackendWant {
  readonly address: string;
  readonly port: number;
  readonly proto: number;
  readonly flags: number;
}

/** One scope of a frontend: the backends of slots 1..n (by name), and slot 0's flags. */
export interface ScopeWant {
  readonly backends: readonly string[];
  readonly flags: number;
  readonly affinityTimeout: number;
}

export interface FrontendWant {
  /** addressName of the frontend: "172.30.0.41:80/TCP". */
  readonly name: string;
  readonly address: string;
  readonly port: number;
  readonly proto: number;
  /** Indexed by scope: [SCOPE_EXTERNAL, SCOPE_INTERNAL]. */
  readonly scopes: readonly [ScopeWant, ScopeWant];
}

export interface ServicePortPlan {
  readonly frontends: readonly FrontendWant[];
  /** Every backend a scope names, by name. */
  readonly backends: ReadonlyMap<string, BackendWant>;
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

const VERDICT_FLAG: Readonly<Record<NoEndpointsVerdict, number>> = {
  reject: serviceFlags.REJECT,
  drop: serviceFlags.DROP,
};

/** The endpoints a route sends to; empty when it has none (the verdict applies). */
function routeEndpoints(
  route: TrafficRoute,
  lists: {
    readonly clusterEndpoints?: readonly EndpointInfo[];
    readonly localEndpoints?: readonly EndpointInfo[];
  },
): readonly EndpointInfo[] {
  if (!route.hasEndpoints) return [];
  return (route.policy === "local" ? lists.localEndpoints : lists.clusterEndpoints) ?? [];
}

function backendWant(ep: EndpointInfo, proto: number): BackendWant {
  const terminating = ep.serving && ep.terminating && !ep.ready;
  const flags = (terminating ? backendFlags.TERMINATING : 0) | (ep.isLocal ? backendFlags.LOCAL : 0);
  return { address: ep.ip, port: ep.port, proto, flags };
}

export function planServicePort(
  options: EBPFOptions,
  sp: ServicePortInfo,
  endpoints: readonly EndpointInfo[],
): ServicePortPlan {
  const categorized = categorizeEndpoints(endpoints, sp, options.nodeName, options.nodeLabels);
  // Source ranges are checked apart from the endpoint choice, endpoints or not (as nftables does).
  const traffic = trafficPolicyPlan(sp, categorized, { firewallRequiresEndpoints: false });
  const proto = protocolNumber(sp.protocol);
  const backends = new Map<string, BackendWant>();
  const names = (list: readonly EndpointInfo[]) =>
    list.map((ep) => {
      const name = addressName(ep.ip, ep.port, proto);
      if (!backends.has(name)) backends.set(name, backendWant(ep, proto));
      return name;
    });
  const lists = {
    internal: names(routeEndpoints(traffic.internal, categorized)),
    external: names(routeEndpoints(traffic.external, categorized)),
    cluster: names(categorized.clusterEndpoints ?? []),
  };
  const frontends = frontendsOf(sp, options.nodePortIPs).map((f) => ({
    name: addressName(f.address, f.port, proto),
    address: f.address,
    port: f.port,
    proto,
    scopes: scopesOf(f, sp, traffic, lists),
  }));
  return {
    frontends,
    backends,
    noLocalInternal: traffic.noLocalInternal,
    noLocalExternal: traffic.noLocalExternal,
  };
}

function scopesOf(
  f: Frontend,
  sp: ServicePortInfo,
  traffic: TrafficPolicyPlan,
  lists: { readonly internal: string[]; readonly external: string[]; readonly cluster: string[] },
): [ScopeWant, ScopeWant] {
  const affinityTimeout = sp.stickyMaxAgeSeconds;
  let flags = KIND_FLAG[f.kind] | (affinityTimeout > 0 ? serviceFlags.AFFINITY : 0);
  if (f.kind === "LoadBalancer" && traffic.usesFirewallChain) flags |= serviceFlags.SOURCE_RANGES;
  const scope = (backends: string[], verdict: NoEndpointsVerdict, scopeFlags: number): ScopeWant => ({
    backends,
    flags: backends.length > 0 ? scopeFlags : scopeFlags | VERDICT_FLAG[verdict],
    affinityTimeout,
  });
  if (f.kind === "ClusterIP") {
    const internal = scope(lists.internal, traffic.internal.noEndpointsVerdict, flags);
    return [internal, internal];
  }
  const local = traffic.external.policy === "local" ? serviceFlags.EXTERNAL_LOCAL : 0;
  return [
    scope(lists.external, traffic.external.noEndpointsVerdict, flags | local),
    scope(lists.cluster, traffic.hasAnyEndpoints ? "drop" : "reject", flags),
  ];
}
