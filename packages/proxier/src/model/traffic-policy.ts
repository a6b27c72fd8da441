// Which per-service chains a Service port needs and where its traffic goes, given its traffic
// policies and the endpoints categorizeEndpoints found. Both the iptables and the nftables
// renderer follow this one decision (kube-proxy repeats it in each proxier.go).
import { externallyAccessible, type ServicePortInfo } from "./service-port.js";
import type { CategorizedEndpoints } from "./topology.js";

/** Which of the two policy chains (endpoint lists) some traffic is sent to. */
export type PolicyChoice = "cluster" | "local";

/**
 * What the filter does with traffic that has no endpoint to go to: "reject" when the Service
 * has no usable endpoint anywhere (the client learns at once), "drop" when endpoints exist but
 * Local policy finds none on this node (traffic from elsewhere may still be served).
 */
export type NoEndpointsVerdict = "drop" | "reject";

export interface TrafficRoute {
  /** The policy chain this traffic is sent to. */
  readonly policy: PolicyChoice;
  /** The policy chain has endpoints for it; false: the filter applies `noEndpointsVerdict`. */
  readonly hasEndpoints: boolean;
  readonly noEndpointsVerdict: NoEndpointsVerdict;
}

export interface TrafficPolicyPlan {
  /** Some usable endpoint exists somewhere in the cluster. */
  readonly hasAnyEndpoints: boolean;
  /** The Cluster-policy chain is written (it has endpoints, and some traffic uses it). */
  readonly usesClusterPolicyChain: boolean;
  /** The Local-policy chain is written. */
  readonly usesLocalPolicyChain: boolean;
  /** ClusterIP traffic: sent straight to its policy chain. */
  readonly internal: TrafficRoute;
  /** NodePort, external IP and load-balancer traffic: enters the external chain first. */
  readonly external: TrafficRoute;
  /**
   * The external chain is written. It depends on hasAnyEndpoints, not on external.hasEndpoints:
   * its short-circuit rules for pod and host traffic are needed even when ETP=Local finds no
   * local endpoint.
   */
  readonly usesExternalChain: boolean;
  /** The firewall chain (loadBalancerSourceRanges) is written. */
  readonly usesFirewallChain: boolean;
  /** Local internal policy found no local endpoint (sync_proxy_rules_no_local_endpoints_total). */
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

export interface TrafficPolicyOptions {
  /**
   * The one place where kube-proxy's two data planes decide differently. iptables reaches its
   * firewall chain (KUBE-FW) only from the nat jump for the load-balancer IP, and that jump
   * exists only when the Service has endpoints; without them the filter table rejects the
   * traffic whatever its source, so no firewall chain is written. nftables checks source
   * ranges in a filter chain that runs before DNAT (firewall-check), apart from the endpoint
   * dispatch, so it keeps the firewall chain for a Service without endpoints and drops
   * sources outside the ranges there before the rest is rejected.
   */
  readonly firewallRequiresEndpoints: boolean;
}

function route(localPolicy: boolean, hasAnyEndpoints: boolean, hasLocalEndpoints: boolean): TrafficRoute {
  return {
    policy: localPolicy ? "local" : "cluster",
    hasEndpoints: hasAnyEndpoints && (!localPolicy || hasLocalEndpoints),
    noEndpointsVerdict: hasAnyEndpoints ? "drop" : "reject",
  };
}

export function trafficPolicyPlan(
  sp: ServicePortInfo,
  endpoints: Pick<CategorizedEndpoints, "clusterEndpoints" | "localEndpoints" | "hasAnyEndpoints">,
  options: TrafficPolicyOptions,
): TrafficPolicyPlan {
  const { hasAnyEndpoints } = endpoints;
  // categorizeEndpoints leaves a list undefined when no traffic uses that policy.
  const usesClusterPolicyChain = (endpoints.clusterEndpoints?.length ?? 0) > 0;
  const usesLocalPolicyChain = (endpoints.localEndpoints?.length ?? 0) > 0;
  const internal = route(sp.internalPolicyLocal, hasAnyEndpoints, usesLocalPolicyChain);
  const external = route(sp.externalPolicyLocal, hasAnyEndpoints, usesLocalPolicyChain);
  const hasSourceRanges = sp.loadBalancerVIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
  return {
    hasAnyEndpoints,
    usesClusterPolicyChain,
    usesLocalPolicyChain,
    internal,
    external,
    usesExternalChain: hasAnyEndpoints && externallyAccessible(sp),
    usesFirewallChain: hasSourceRanges && (hasAnyEndpoints || !options.firewallRequiresEndpoints),
    noLocalInternal: hasAnyEndpoints && !internal.hasEndpoints,
    noLocalExternal: hasAnyEndpoints && !external.hasEndpoints,
  };
}

/** The chain `choice` names among a renderer's two policy chains. */
export function policyChain(
  chains: { readonly clusterPolicy: string; readonly localPolicy: string },
  choice: PolicyChoice,
): string {
  return choice === "local" ? chains.localPolicy : chains.clusterPolicy;
}
