// One Service port's own nat chains: masquerading on the internal policy chain, KUBE-EXT
// (external traffic), KUBE-FW (loadBalancerSourceRanges) and the policy chains KUBE-SVC and
// KUBE-SVL that pick an endpoint.

import { sourceRangesContain } from "../model/service-port.js";
import type { CategorizedEndpoints } from "../model/topology.js";
import { policyChain } from "../model/traffic-policy.js";
import { writeServiceToEndpointRules } from "./endpoint-rules.js";
import { chainLine, quoted } from "./line-buffer.js";
import * as N from "./names.js";
import { ifLocal, ifNotLocal } from "./options.js";
import { commentArgs, destinationArgs, writeRule } from "./rule-args.js";
import type { PortPlan } from "./service-port-context.js";

/** Declares one of the port's chains and keeps it from being cleaned up as stale. */
function declareChain(port: PortPlan, chain: string): void {
  port.ctx.natChains.write(chainLine(chain));
  port.ctx.activeNATChains.add(chain);
}

/**
 * ClusterIP traffic is masqueraded in its policy chain when it comes from outside the
 * cluster (or always, with masqueradeAll).
 */
export function writeInternalMasquerade(port: PortPlan): void {
  const { ctx, sp, traffic } = port;
  if (!traffic.internal.hasEndpoints) return;
  const { options, natRules } = ctx;
  const chain = policyChain(port.chains, traffic.internal.policy);
  const match = [
    ...commentArgs(quoted(`${port.name} cluster IP`)),
    ...destinationArgs(port.proto, sp.clusterIP, sp.port),
  ];
  const notLocal = ifNotLocal(options.localDetector);
  if (options.masqueradeAll) {
    natRules.write("-A", chain, match, "-j", N.KUBE_MARK_MASQ_CHAIN);
  } else if (notLocal) {
    // Off-cluster traffic to a ClusterIP (say, through a static route to this node) may
    // leave the node again towards the endpoint, so it must be masqueraded.
    natRules.write("-A", chain, match, notLocal, "-j", N.KUBE_MARK_MASQ_CHAIN);
  }
}

/**
 * External traffic always enters KUBE-EXT, which short-circuits some sources before the
 * policy chain; the chain is needed even when ETP=Local finds no local endpoint.
 */
export function writeExternalChain(port: PortPlan): void {
  const { ctx, traffic, chains, name } = port;
  if (!traffic.usesExternalChain) return;
  const { natRules } = ctx;
  declareChain(port, chains.external);
  if (traffic.external.policy === "cluster") {
    // Endpoints may be on another node: masquerade so the replies come back through us.
    const comment = quoted(`masquerade traffic for ${name} external destinations`);
    writeRule(natRules, chains.external, comment, "-j", N.KUBE_MARK_MASQ_CHAIN);
  } else {
    const local = ifLocal(ctx.options.localDetector);
    if (local) {
      // Pods reaching an external address behave as if they went out to the load
      // balancer and came back: no traffic policy applies to them.
      const comment = quoted(`pod traffic for ${name} external destinations`);
      writeRule(natRules, chains.external, comment, local, "-j", chains.clusterPolicy);
    }
    // The host's own traffic has a local source address (often the VIP itself) and
    // needs SNAT to get its replies.
    const fromHost = ["-m", "addrtype", "--src-type", "LOCAL"];
    const masquerade = quoted(`masquerade LOCAL traffic for ${name} external destinations`);
    writeRule(natRules, chains.external, masquerade, fromHost, "-j", N.KUBE_MARK_MASQ_CHAIN);
    const route = quoted(`route LOCAL traffic for ${name} external destinations`);
    writeRule(natRules, chains.external, route, fromHost, "-j", chains.clusterPolicy);
  }
  if (traffic.external.hasEndpoints) {
    natRules.write("-A", chains.external, "-j", policyChain(chains, traffic.external.policy));
  }
}

/** Source ranges only work for load balancers that keep the client's address. */
export function writeFirewallChain(port: PortPlan): void {
  const { ctx, sp, chains, name } = port;
  if (!port.traffic.usesFirewallChain) return;
  const { natRules } = ctx;
  declareChain(port, chains.firewall);
  const comment = quoted(`${name} loadbalancer IP`);
  for (const cidr of sp.loadBalancerSourceRanges) {
    writeRule(natRules, chains.firewall, comment, "-s", cidr, "-j", chains.external);
  }
  // A VIP is often also a local address, so the node's own request to it loops back with
  // the VIP as source; allow that when the ranges allow the node.
  if (sourceRangesContain(sp, ctx.options.nodeIP)) {
    for (const lbIP of sp.loadBalancerVIPs) {
      writeRule(natRules, chains.firewall, comment, "-s", lbIP, "-j", chains.external);
    }
  }
  // Falling off the end leaves the packet un-DNATed, for KUBE-PROXY-FIREWALL to drop.
  writeRule(
    natRules,
    chains.firewall,
    quoted(`other traffic to ${name} will be dropped by KUBE-PROXY-FIREWALL`),
  );
}

/** KUBE-SVC (Cluster policy) and KUBE-SVL (Local policy), each choosing among its endpoints. */
export function writePolicyChains(
  port: PortPlan,
  endpoints: Pick<CategorizedEndpoints, "clusterEndpoints" | "localEndpoints">,
): void {
  const { ctx, sp, traffic, chains } = port;
  if (traffic.usesClusterPolicyChain) {
    declareChain(port, chains.clusterPolicy);
    writeServiceToEndpointRules(ctx, sp, chains.clusterPolicy, endpoints.clusterEndpoints ?? []);
  }
  if (traffic.usesLocalPolicyChain) {
    declareChain(port, chains.localPolicy);
    writeServiceToEndpointRules(ctx, sp, chains.localPolicy, endpoints.localEndpoints ?? []);
  }
}
