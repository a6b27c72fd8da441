// The chains, rules and map elements of one Service port.
import type { EndpointInfo } from "../model/endpoint.js";
import { endpointString } from "../model/endpoint.js";
import { nftLocalMatch } from "../model/local-detector.js";
import { externallyAccessible, type ServicePortInfo, sourceRangesContain } from "../model/service-port.js";
import { servicePortNameString } from "../model/service-port-name.js";
import { categorizeEndpoints } from "../model/topology.js";
import type { ElementStore } from "./element-store.js";
import * as N from "./names.js";
import { addrType, ipX, type NFTablesOptions, setMasqueradeMark } from "./options.js";
import type { ServicePortOutcome, ServicePortRecordBuilder } from "./service-record.js";
import type { ContainerName } from "./skeleton.js";
import type { Transaction } from "./transaction.js";

export interface ServicePortContext {
  readonly tx: Transaction;
  readonly options: NFTablesOptions;
  readonly stores: Readonly<Record<ContainerName, ElementStore>>;
  /** Chains written or kept this sync; everything else with a "/" is stale. */
  readonly activeChains: Set<string>;
  readonly activeAffinitySets: Set<string>;
  /** Partial sync and nothing about this Service changed: keep its chains as they are. */
  readonly skipChains: boolean;
  /** Filled with what this Service port contributes, for later partial syncs to replay. */
  readonly record: ServicePortRecordBuilder;
}

function ensure(
  ctx: ServicePortContext,
  container: ContainerName,
  key: readonly string[],
  value?: readonly string[],
  comment?: string,
): void {
  ctx.record.elements.push({ container, element: ctx.stores[container].ensure(ctx.tx, key, value, comment) });
}

function ensureChain(ctx: ServicePortContext, name: string): void {
  if (ctx.activeChains.has(name)) return;
  ctx.activeChains.add(name);
  ctx.record.chains.push(name);
  if (ctx.skipChains) return;
  ctx.tx.add({ kind: "chain", name });
  ctx.tx.flush({ kind: "chain", name });
}

function rule(ctx: ServicePortContext, chain: string, text: string, comment?: string): void {
  ctx.tx.add({ kind: "rule", chain, rule: text, comment });
}

export function writeServicePort(
  ctx: ServicePortContext,
  sp: ServicePortInfo,
  endpoints: readonly EndpointInfo[],
): ServicePortOutcome {
  const { options } = ctx;
  const ip = ipX(options);
  const proto = sp.protocol.toLowerCase();
  const port = String(sp.port);
  const nameString = servicePortNameString(sp.name);
  const chains = N.servicePortChainNames(sp.name);
  const affinity = sp.stickyMaxAgeSeconds > 0;
  const { clusterEndpoints, localEndpoints, allReachableEndpoints, hasAnyEndpoints } = categorizeEndpoints(
    endpoints,
    sp,
    options.nodeName,
    options.nodeLabels,
  );

  for (const ep of allReachableEndpoints) {
    // The hairpin set is shared, so its elements are kept even when the chains are skipped.
    if (ep.isLocal) ensure(ctx, "hairpin-connections", [ep.ip, ep.ip, proto, String(ep.port)]);
    if (!affinity) continue;
    // Only affinity needs a chain per endpoint: it records the client before the DNAT.
    ensureChain(ctx, N.endpointChainName(sp.name, ep));
    const set = N.affinitySetName(sp.name, ep);
    ctx.activeAffinitySets.add(set);
    ctx.record.affinitySets.push(set);
  }
  const usesClusterChain = (clusterEndpoints?.length ?? 0) > 0;
  if (usesClusterChain) ensureChain(ctx, chains.clusterPolicy);
  const usesLocalChain = (localEndpoints?.length ?? 0) > 0;
  if (usesLocalChain) ensureChain(ctx, chains.localPolicy);

  // ClusterIP traffic goes to the policy chain directly; hasInternal is false when ITP=Local
  // and this node has no endpoint, in which case the traffic is dropped.
  const internalChain = sp.internalPolicyLocal ? chains.localPolicy : chains.clusterPolicy;
  const hasInternal = hasAnyEndpoints && (!sp.internalPolicyLocal || usesLocalChain);
  // External traffic always enters the "external-" chain, which short-circuits some sources
  // before handing over to the policy chain; hasExternal is false for ETP=Local without a
  // local endpoint, but the chain is still needed for the short-circuit rules.
  const externalPolicyChain = sp.externalPolicyLocal ? chains.localPolicy : chains.clusterPolicy;
  const hasExternal = hasAnyEndpoints && (!sp.externalPolicyLocal || usesLocalChain);
  const usesExternalChain = hasAnyEndpoints && externallyAccessible(sp);
  if (usesExternalChain) ensureChain(ctx, chains.external);

  const reject = `goto ${N.REJECT_CHAIN}`;
  const internalVerdict = hasAnyEndpoints ? "drop" : reject;
  const externalVerdict = hasAnyEndpoints ? "drop" : reject;

  ensure(ctx, "cluster-ips", [sp.clusterIP]);
  if (hasInternal) {
    ensure(ctx, "service-ips", [sp.clusterIP, proto, port], [`goto ${internalChain}`]);
  } else {
    ensure(ctx, "no-endpoint-services", [sp.clusterIP, proto, port], [internalVerdict], nameString);
  }
  for (const extIP of sp.externalIPs) {
    if (hasAnyEndpoints) ensure(ctx, "service-ips", [extIP, proto, port], [`goto ${chains.external}`]);
    if (!hasExternal) {
      ensure(ctx, "no-endpoint-services", [extIP, proto, port], [externalVerdict], nameString);
    }
  }
  const usesFirewall = sp.loadBalancerVIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
  if (usesFirewall) ensureChain(ctx, chains.firewall);
  for (const lbIP of sp.loadBalancerVIPs) {
    if (hasAnyEndpoints) ensure(ctx, "service-ips", [lbIP, proto, port], [`goto ${chains.external}`]);
    if (usesFirewall) ensure(ctx, "firewall-ips", [lbIP, proto, port], [`goto ${chains.firewall}`]);
  }
  if (!hasExternal) {
    for (const lbIP of sp.loadBalancerVIPs) {
      ensure(ctx, "no-endpoint-services", [lbIP, proto, port], [externalVerdict], nameString);
    }
  }
  if (sp.nodePort !== 0) {
    // NodePorts are not subject to loadBalancerSourceRanges, and never were.
    const key = [proto, String(sp.nodePort)];
    if (hasAnyEndpoints) ensure(ctx, "service-nodeports", key, [`goto ${chains.external}`]);
    if (!hasExternal) ensure(ctx, "no-endpoint-nodeports", key, [externalVerdict], nameString);
  }

  const outcome = {
    noLocalInternal: hasAnyEndpoints && !hasInternal,
    noLocalExternal: hasAnyEndpoints && !hasExternal,
  };
  if (ctx.skipChains) return outcome;

  const setMark = setMasqueradeMark(options);
  if (usesExternalChain) {
    if (!sp.externalPolicyLocal) {
      // Endpoints may be on another node: masquerade so replies come back through us.
      rule(ctx, chains.external, setMark, "masquerade");
    } else {
      // Pods reaching an external IP behave as if they went out to the LB and back in:
      // no traffic policy applies to them.
      const local = nftLocalMatch(options.localDetector, false);
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
    if (hasExternal) rule(ctx, chains.external, `goto ${externalPolicyChain}`);
  }

  if (usesFirewall) {
    const sources = [...sp.loadBalancerSourceRanges];
    // A VIP is often also a local address, so the node's own request to it arrives with the
    // VIP as source; allow that when the ranges allow the node.
    if (sourceRangesContain(sp, options.nodeIP)) sources.push(...sp.loadBalancerVIPs);
    rule(ctx, chains.firewall, `${ip} saddr != { ${sources.join(" , ")} } drop`);
  }

  if (affinity) {
    for (const ep of allReachableEndpoints) {
      // Affinity is per source IP and ServicePort, whichever service IP was used.
      ctx.tx.add({
        kind: "set",
        name: N.affinitySetName(sp.name, ep),
        type: addrType(options),
        flags: ["dynamic", "timeout"],
        timeout: sp.stickyMaxAgeSeconds,
      });
    }
  }
  if (usesClusterChain) writeLoadBalancing(ctx, sp, chains.clusterPolicy, clusterEndpoints ?? []);
  if (usesLocalChain) writeLoadBalancing(ctx, sp, chains.localPolicy, localEndpoints ?? []);

  if (affinity) {
    for (const ep of allReachableEndpoints) {
      const chain = N.endpointChainName(sp.name, ep);
      rule(ctx, chain, `update @${N.affinitySetName(sp.name, ep)} { ${ip} saddr }`);
      rule(ctx, chain, `meta l4proto ${proto} dnat to ${endpointString(ep)}`);
    }
  }
  return outcome;
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
