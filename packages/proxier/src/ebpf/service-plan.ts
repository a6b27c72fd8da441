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
// A plan always names both; the maps hold the internal one only where it differs (write.ts, TWO_SCOPES).

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
import { admittedSources } from "./source-ranges.js";

/** A backend as the backends map holds it; its name is addressName of it. */
export interface BackendWant {
  readonly address: string;
  readonly port: number;
  readonly proto: number;
  readonly flags: number;
}

/** One scope of a frontend: the backends of slots 1..n, and slot 0's flags. */
export interface ScopeWant {
  /** By name. */
  readonly backends: readonly string[];
  /** The same, as positions in the port's backends (ServicePortPlan.backends' order). */
  readonly backendIndexes: readonly number[];
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
  /** The sources admitted when the scopes carry SOURCE_RANGES (source-ranges.ts); empty otherwise. */
  readonly sourceRanges: readonly string[];
}

export interface ServicePortPlan {
  readonly frontends: readonly FrontendWant[];
  /** Every backend a scope names, once each: names, and what each wants, in the same order. */
  readonly backendNames: readonly string[];
  readonly backends: readonly BackendWant[];
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

/** The backends of one endpoint list: by name, and as positions in the port's backends. */
interface NamedList {
  readonly names: string[];
  readonly indexes: number[];
}

/**
 * The backends of a port's endpoint lists, each once, in the order first named. The routes mostly share one
 * list: it is named once, and the scopes over it share the names. The first list needs no lookup (a list
 * holds an ip:port once); a name index is built only when a second, different list comes.
 */
class BackendNames {
  readonly names: string[] = [];
  readonly wants: BackendWant[] = [];
  #index: Map<string, number> | undefined;
  readonly #proto: number;
  readonly #lists: (readonly EndpointInfo[])[] = [];
  readonly #named: NamedList[] = [];

  constructor(proto: number) {
    this.#proto = proto;
  }

  of(list: readonly EndpointInfo[]): NamedList {
    const known = this.#named[this.#lists.indexOf(list)];
    if (known) return known;
    const named = this.#lists.length === 0 ? this.#first(list) : this.#next(list);
    this.#lists.push(list);
    this.#named.push(named);
    return named;
  }

  #first(list: readonly EndpointInfo[]): NamedList {
    for (const ep of list) {
      this.names.push(addressName(ep.ip, ep.port, this.#proto));
      this.wants.push(backendWant(ep, this.#proto));
    }
    return { names: this.names.slice(), indexes: this.names.map((_, i) => i) };
  }

  #next(list: readonly EndpointInfo[]): NamedList {
    this.#index ??= new Map(this.names.map((name, i) => [name, i]));
    const index = this.#index;
    const named: NamedList = { names: [], indexes: [] };
    for (const ep of list) {
      const name = addressName(ep.ip, ep.port, this.#proto);
      let at = index.get(name);
      if (at === undefined) {
        at = this.names.length;
        this.names.push(name);
        this.wants.push(backendWant(ep, this.#proto));
        index.set(name, at);
      }
      named.names.push(name);
      named.indexes.push(at);
    }
    return named;
  }
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
  const named = new BackendNames(proto);
  const lists = {
    internal: named.of(routeEndpoints(traffic.internal, categorized)),
    external: named.of(routeEndpoints(traffic.external, categorized)),
    cluster: named.of(categorized.clusterEndpoints ?? []),
  };
  const ranges = traffic.usesFirewallChain ? admittedSources(sp, options.nodeIP) : [];
  const frontends = frontendsOf(sp, options.nodePortIPs).map((f) => {
    const scopes = scopesOf(f, sp, traffic, lists);
    const ranged = (scopes[0].flags & serviceFlags.SOURCE_RANGES) !== 0;
    return {
      name: addressName(f.address, f.port, proto),
      address: f.address,
      port: f.port,
      proto,
      scopes,
      sourceRanges: ranged ? ranges : [],
    };
  });
  return {
    frontends,
    backendNames: named.names,
    backends: named.wants,
    noLocalInternal: traffic.noLocalInternal,
    noLocalExternal: traffic.noLocalExternal,
  };
}

/** Options that plan every port alike: the same node, labels and NodePort addresses. */
export function samePlanOptions(a: EBPFOptions, b: EBPFOptions): boolean {
  const labels = Object.keys(a.nodeLabels);
  return (
    a.family === b.family &&
    a.nodeName === b.nodeName &&
    a.nodeIP === b.nodeIP &&
    labels.length === Object.keys(b.nodeLabels).length &&
    labels.every((k) => a.nodeLabels[k] === b.nodeLabels[k]) &&
    a.nodePortIPs.length === b.nodePortIPs.length &&
    a.nodePortIPs.every((ip, i) => ip === b.nodePortIPs[i])
  );
}

export function sameBackend(a: BackendWant, b: BackendWant): boolean {
  return a.address === b.address && a.port === b.port && a.proto === b.proto && a.flags === b.flags;
}

export function sameFrontend(a: FrontendWant, b: FrontendWant): boolean {
  return (
    a.name === b.name &&
    a.address === b.address &&
    a.port === b.port &&
    a.proto === b.proto &&
    sameScope(a.scopes[0], b.scopes[0]) &&
    sameScope(a.scopes[1], b.scopes[1]) &&
    a.sourceRanges.length === b.sourceRanges.length &&
    a.sourceRanges.every((range, i) => range === b.sourceRanges[i])
  );
}

function sameScope(a: ScopeWant, b: ScopeWant): boolean {
  if (a.flags !== b.flags || a.affinityTimeout !== b.affinityTimeout) return false;
  if (a.backends === b.backends) return true;
  if (a.backends.length !== b.backends.length) return false;
  return a.backends.every((name, i) => name === b.backends[i]);
}

function scopesOf(
  f: Frontend,
  sp: ServicePortInfo,
  traffic: TrafficPolicyPlan,
  lists: { readonly internal: NamedList; readonly external: NamedList; readonly cluster: NamedList },
): [ScopeWant, ScopeWant] {
  const affinityTimeout = sp.stickyMaxAgeSeconds;
  let flags = KIND_FLAG[f.kind] | (affinityTimeout > 0 ? serviceFlags.AFFINITY : 0);
  if (f.kind === "LoadBalancer" && traffic.usesFirewallChain) flags |= serviceFlags.SOURCE_RANGES;
  if (f.kind === "ClusterIP") {
    const internal = scopeWant(lists.internal, traffic.internal.noEndpointsVerdict, flags, affinityTimeout);
    return [internal, internal];
  }
  const local = traffic.external.policy === "local" ? serviceFlags.EXTERNAL_LOCAL : 0;
  const verdict = traffic.hasAnyEndpoints ? "drop" : "reject";
  return [
    scopeWant(lists.external, traffic.external.noEndpointsVerdict, flags | local, affinityTimeout),
    scopeWant(lists.cluster, verdict, flags, affinityTimeout),
  ];
}

/** Without backends, slot 0 carries the verdict. */
function scopeWant(
  backends: NamedList,
  verdict: NoEndpointsVerdict,
  flags: number,
  affinityTimeout: number,
): ScopeWant {
  return {
    backends: backends.names,
    backendIndexes: backends.indexes,
    flags: backends.names.length > 0 ? flags : flags | VERDICT_FLAG[verdict],
    affinityTimeout,
  };
}
