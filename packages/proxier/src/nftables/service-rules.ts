// The chains, rules and map elements of one Service port.
import type { EndpointInfo } from "../model/endpoint.js";
import { endpointString } from "../model/endpoint.js";
import { nftLocalMatch } from "../model/local-detector.js";
import { type ServicePortInfo, sourceRangesContain } from "../model/service-port.js";
import { servicePortNameString } from "../model/service-port-name.js";
import { categorizeEndpoints } from "../model/topology.js";
import {
  policyChain,
  type TrafficPolicyPlan,
  type TrafficRoute,
  trafficPolicyPlan,
} from "../model/traffic-policy.js";
import { type ContainerElements, keyedElement } from "./element-store.js";
import * as N from "./names.js";
import { addrType, ipX, type NFTablesOptions, setMasqueradeMark } from "./options.js";
import type { ServicePortOutcome, ServicePortRecordBuilder } from "./service-record.js";
import type { ContainerName } from "./skeleton.js";
import type { Transaction } from "./transaction.js";

export interface ServicePortContext {
  readonly tx: Transaction;
  readonly options: NFTablesOptions;
  /** The shared sets and maps; the port claims its elements in them (see ContainerElements). */
  readonly stores: Readonly<Record<ContainerName, ContainerElements>>;
  /** The service port key the claims are made for. */
  readonly port: string;
  /** Chains written this sync, so that one shared by two ports is written once. */
  readonly written: Set<string>;
  /** Filled with what this Service port contributes, for a later sync to take back. */
  readonly record: ServicePortRecordBuilder;
}

function ensure(
  ctx: ServicePortContext,
  container: ContainerName,
  key: readonly string[],
  value?: readonly string[],
  comment?: string,
): void {
  const element = keyedElement(key, value, comment);
  ctx.stores[container].claim(ctx.port, element);
  ctx.record.elements.push({ container, element });
}

function ensureChain(ctx: ServicePortContext, name: string): void {
  if (ctx.record.chains.includes(name)) return;
  ctx.record.chains.push(name);
  if (ctx.written.has(name)) return;
  ctx.written.add(name);
  ctx.tx.add({ kind: "chain", name });
  ctx.tx.flush({ kind: "chain", name });
}

function rule(ctx: ServicePortContext, chain: string, text: string, comment?: string): void {
  ctx.tx.add({ kind: "rule", chain, rule: text, comment });
}

/** One Service port being written, with its names and the traffic-policy decision. */
interface PortPlan {
  readonly ctx: ServicePortContext;
  readonly sp: ServicePortInfo;
  /** Lower-case protocol, as element keys and matches take it. */
  readonly proto: string;
  readonly port: string;
  /** "ns/svc:port", the comment of no-endpoint elements. */
  readonly name: string;
  readonly chains: N.ServicePortChainNames;
  readonly traffic: TrafficPolicyPlan;
}

export function writeServicePort(
  ctx: ServicePortContext,
  sp: ServicePortInfo,
  endpoints: readonly EndpointInfo[],
): ServicePortOutcome {
  const { options } = ctx;
  const categorized = categorizeEndpoints(endpoints, sp, options.nodeName, options.nodeLabels);
  const port: PortPlan = {
    ctx,
    sp,
    proto: sp.protocol.toLowerCase(),
    port: String(sp.port),
    name: servicePortNameString(sp.name),
    chains: N.servicePortChainNames(sp.name),
    // firewall-check filters source ranges before DNAT, endpoints or not (see TrafficPolicyOptions).
    traffic: trafficPolicyPlan(sp, categorized, { firewallRequiresEndpoints: false }),
  };
  const { traffic, chains } = port;
  const reachable = categorized.allReachableEndpoints;

  ensureEndpointState(port, reachable);
  if (traffic.usesClusterPolicyChain) ensureChain(ctx, chains.clusterPolicy);
  if (traffic.usesLocalPolicyChain) ensureChain(ctx, chains.localPolicy);
  if (traffic.usesExternalChain) ensureChain(ctx, chains.external);

  ensureClusterIPElements(port);
  ensureExternalIPElements(port);
  ensureLoadBalancerElements(port);
  ensureNodePortElements(port);

  const outcome = { noLocalInternal: traffic.noLocalInternal, noLocalExternal: traffic.noLocalExternal };
  writeExternalChain(port);
  writeFirewallChain(port);
  if (sp.stickyMaxAgeSeconds > 0) writeAffinitySets(port, reachable);
  if (traffic.usesClusterPolicyChain) {
    writeLoadBalancing(ctx, sp, chains.clusterPolicy, categorized.clusterEndpoints ?? []);
  }
  if (traffic.usesLocalPolicyChain) {
    writeLoadBalancing(ctx, sp, chains.localPolicy, categorized.localEndpoints ?? []);
  }
  if (sp.stickyMaxAgeSeconds > 0) writeAffinityEndpointChains(port, reachable);
  return outcome;
}

/** The verdict of a no-endpoint-services/-nodeports element. */
function noEndpointsVerdict(route: TrafficRoute): string {
  return route.noEndpointsVerdict === "reject" ? `goto ${N.REJECT_CHAIN}` : "drop";
}

/** The hairpin elements, and with affinity each endpoint's chain and set. */
function ensureEndpointState(port: PortPlan, endpoints: readonly EndpointInfo[]): void {
  const { ctx, sp, proto } = port;
  const affinity = sp.stickyMaxAgeSeconds > 0;
  for (const ep of endpoints) {
    // The hairpin set is shared: two Services with the same local endpoint claim one element.
    if (ep.isLocal) ensure(ctx, "hairpin-connections", [ep.ip, ep.ip, proto, String(ep.port)]);
    if (!affinity) continue;
    // Only affinity needs a chain per endpoint: it records the client before the DNAT.
    ensureChain(ctx, N.endpointChainName(sp.name, ep));
    ctx.record.affinitySets.push(N.affinitySetName(sp.name, ep));
  }
}

// ClusterIP traffic goes to the policy chain directly; without internal endpoints (ITP=Local
// and none on this node) it is dropped instead.
function ensureClusterIPElements(port: PortPlan): void {
  const { ctx, sp, proto, traffic } = port;
  const key = [sp.clusterIP, proto, port.port];
  ensure(ctx, "cluster-ips", [sp.clusterIP]);
  if (traffic.internal.hasEndpoints) {
    ensure(ctx, "service-ips", key, [`goto ${policyChain(port.chains, traffic.internal.policy)}`]);
  } else {
    ensure(ctx, "no-endpoint-services", key, [noEndpointsVerdict(traffic.internal)], port.name);
  }
}

function ensureExternalIPElements(port: PortPlan): void {
  const { ctx, sp, proto, traffic } = port;
  for (const extIP of sp.externalIPs) {
    const key = [extIP, proto, port.port];
    if (traffic.hasAnyEndpoints) ensure(ctx, "service-ips", key, [`goto ${port.chains.external}`]);
    if (!traffic.external.hasEndpoints) {
      ensure(ctx, "no-endpoint-services", key, [noEndpointsVerdict(traffic.external)], port.name);
    }
  }
}

function ensureLoadBalancerElements(port: PortPlan): void {
  const { ctx, sp, proto, traffic, chains } = port;
  if (traffic.usesFirewallChain) ensureChain(ctx, chains.firewall);
  for (const lbIP of sp.loadBalancerVIPs) {
    const key = [lbIP, proto, port.port];
    if (traffic.hasAnyEndpoints) ensure(ctx, "service-ips", key, [`goto ${chains.external}`]);
    if (traffic.usesFirewallChain) ensure(ctx, "firewall-ips", key, [`goto ${chains.firewall}`]);
  }
  if (traffic.external.hasEndpoints) return;
  for (const lbIP of sp.loadBalancerVIPs) {
    const key = [lbIP, proto, port.port];
    ensure(ctx, "no-endpoint-services", key, [noEndpointsVerdict(traffic.external)], port.name);
  }
}

// NodePorts are not subject to loadBalancerSourceRanges, and never were.
function ensureNodePortElements(port: PortPlan): void {
  const { ctx, sp, traffic } = port;
  if (sp.nodePort === 0) return;
  const key = [port.proto, String(sp.nodePort)];
  if (traffic.hasAnyEndpoints) ensure(ctx, "service-nodeports", key, [`goto ${port.chains.external}`]);
  if (!traffic.external.hasEndpoints) {
    ensure(ctx, "no-endpoint-nodeports", key, [noEndpointsVerdict(traffic.external)], port.name);
  }
}

/**
 * External traffic always enters the "external-" chain, which short-circuits some sources
 * before handing over to the policy chain; the chain is needed for those rules even when
 * ETP=Local finds no local endpoint.
 */
function writeExternalChain(port: PortPlan): void {
  const { ctx, traffic, chains } = port;
  if (!traffic.usesExternalChain) return;
  const setMark = setMasqueradeMark(ctx.options);
  if (traffic.external.policy === "cluster") {
    // Endpoints may be on another node: masquerade so replies come back through us.
    rule(ctx, chains.external, setMark, "masquerade");
  } else {
    // Pods reaching an external IP behave as if they went out to the LB and back in:
    // no traffic policy applies to them.
    const local = nftLocalMatch(ctx.options.localDetector, false);
    if (local !== null) {
      rule(ctx, chains.external, `${local} goto ${chains.clusterPolicy}`, "short-circuit pod traffic");
    }
    // The host's own traffic has a local source address and needs SNAT to get replies.
    rule(ctx, chains.external, `fib saddr type local ${setMark}`, "masquerade local traffic");
    rule(
      ctx,
      chains.external,
      `fib saddr type local goto ${chains.clusterPolicy}`,
      "short-circuit local traffic",
    );
  }
  if (traffic.external.hasEndpoints) {
    rule(ctx, chains.external, `goto ${policyChain(chains, traffic.external.policy)}`);
  }
}

function writeFirewallChain(port: PortPlan): void {
  const { ctx, sp } = port;
  if (!port.traffic.usesFirewallChain) return;
  const sources = [...sp.loadBalancerSourceRanges];
  // A VIP is often also a local address, so the node's own request to it arrives with the
  // VIP as source; allow that when the ranges allow the node.
  if (sourceRangesContain(sp, ctx.options.nodeIP)) sources.push(...sp.loadBalancerVIPs);
  rule(ctx, port.chains.firewall, `${ipX(ctx.options)} saddr != { ${sources.join(" , ")} } drop`);
}

// Affinity is per source IP and ServicePort, whichever service IP was used.
function writeAffinitySets(port: PortPlan, endpoints: readonly EndpointInfo[]): void {
  const { ctx, sp } = port;
  for (const ep of endpoints) {
    ctx.tx.add({
      kind: "set",
      name: N.affinitySetName(sp.name, ep),
      type: addrType(ctx.options),
      flags: ["dynamic", "timeout"],
      timeout: sp.stickyMaxAgeSeconds,
    });
  }
}

/** With affinity, each endpoint's chain records the client, then DNATs. */
function writeAffinityEndpointChains(port: PortPlan, endpoints: readonly EndpointInfo[]): void {
  const { ctx, sp, proto } = port;
  const ip = ipX(ctx.options);
  for (const ep of endpoints) {
    const chain = N.endpointChainName(sp.name, ep);
    rule(ctx, chain, `update @${N.affinitySetName(sp.name, ep)} { ${ip} saddr }`);
    rule(ctx, chain, `meta l4proto ${proto} dnat to ${endpointString(ep)}`);
  }
}

/**
 * The policy chain's choice of endpoint. Without affinity the DNAT happens right here: one
 * endpoint needs no choice, several are picked from an anonymous map keyed by a random
 * number. With affinity a remembered client goes back to its endpoint's chain first.
 */
function writeLoadBalancing(
  ctx: ServicePortContext,
  sp: ServicePortInfo,
  chain: string,
  endpoints: readonly EndpointInfo[],
): void {
  const ip = ipX(ctx.options);
  const proto = sp.protocol.toLowerCase();
  if (sp.stickyMaxAgeSeconds > 0) {
    for (const ep of endpoints) {
      rule(
        ctx,
        chain,
        `${ip} saddr @${N.affinitySetName(sp.name, ep)} goto ${N.endpointChainName(sp.name, ep)}`,
      );
    }
    const branches = endpoints.map((ep, i) => `${i} : goto ${N.endpointChainName(sp.name, ep)}`);
    rule(ctx, chain, `numgen random mod ${endpoints.length} vmap { ${branches.join(" , ")} }`);
    return;
  }
  const [only] = endpoints;
  if (endpoints.length === 1 && only) {
    rule(ctx, chain, `meta l4proto ${proto} dnat to ${endpointString(only)}`);
    return;
  }
  const targets = endpoints.map((ep, i) => `${i} : ${ep.ip} . ${ep.port}`);
  rule(
    ctx,
    chain,
    `meta l4proto ${proto} dnat ${ip} addr . port to numgen random mod ${endpoints.length} map { ${targets.join(" , ")} }`,
  );
}
