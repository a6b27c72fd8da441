// One Service port's rules: its entries in the shared dispatch chains (KUBE-SERVICES,
// KUBE-NODEPORTS, KUBE-EXTERNAL-SERVICES, KUBE-PROXY-FIREWALL), then its own nat chains.
import type { EndpointInfo } from "../model/endpoint.js";
import type { ServicePortInfo } from "../model/service-port.js";
import { servicePortNameString } from "../model/service-port-name.js";
import { categorizeEndpoints } from "../model/topology.js";
import { policyChain, type TrafficRoute, trafficPolicyPlan } from "../model/traffic-policy.js";
import { writeEndpointChains } from "./endpoint-rules.js";
import { type Arg, quoted } from "./line-buffer.js";
import * as N from "./names.js";
import { localhostNodePortsEnabled } from "./options.js";
import { destinationArgs, protocolArgs, writeRule } from "./rule-args.js";
import {
  writeExternalChain,
  writeFirewallChain,
  writeInternalMasquerade,
  writePolicyChains,
} from "./service-chains.js";
import type { PortPlan, ServicePortContext, ServicePortOutcome } from "./service-port-context.js";

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
    name: servicePortNameString(sp.name),
    proto: sp.protocol.toLowerCase(),
    chains: N.servicePortChains(sp.name),
    // KUBE-FW is reached only through the KUBE-SERVICES jump that endpoints bring (see TrafficPolicyOptions).
    traffic: trafficPolicyPlan(sp, categorized, { firewallRequiresEndpoints: true }),
  };

  writeClusterIPDispatch(port);
  writeExternalIPDispatch(port);
  writeLoadBalancerDispatch(port);
  writeNodePortDispatch(port);
  writeHealthCheckAccept(port);

  writeInternalMasquerade(port);
  writeExternalChain(port);
  writeFirewallChain(port);
  writePolicyChains(port, categorized);
  writeEndpointChains(ctx, sp, categorized.allReachableEndpoints);
  return { noLocalInternal: port.traffic.noLocalInternal, noLocalExternal: port.traffic.noLocalExternal };
}

/** The filter rule's comment and target for traffic that has no endpoint to go to. */
function noEndpointsFilter(port: PortPlan, route: TrafficRoute): { comment: string; target: string } {
  return route.noEndpointsVerdict === "reject"
    ? { comment: quoted(`${port.name} has no endpoints`), target: "REJECT" }
    : { comment: quoted(`${port.name} has no local endpoints`), target: "DROP" };
}

/** Drops or rejects external traffic (matched by `match`) that has no endpoint to go to. */
function writeExternalFilter(port: PortPlan, ...match: readonly Arg[]): void {
  const filter = noEndpointsFilter(port, port.traffic.external);
  writeRule(
    port.ctx.filterRules,
    N.KUBE_EXTERNAL_SERVICES_CHAIN,
    filter.comment,
    ...match,
    "-j",
    filter.target,
  );
}

// ClusterIP traffic goes straight to its policy chain; with ITP=Local and no endpoint on
// this node there is nothing to go to and the filter table drops it instead.
function writeClusterIPDispatch(port: PortPlan): void {
  const { ctx, sp, traffic } = port;
  const match = destinationArgs(port.proto, sp.clusterIP, sp.port);
  if (traffic.internal.hasEndpoints) {
    const target = policyChain(port.chains, traffic.internal.policy);
    writeRule(ctx.topNatRules, N.KUBE_SERVICES_CHAIN, quoted(`${port.name} cluster IP`), match, "-j", target);
    return;
  }
  const filter = noEndpointsFilter(port, traffic.internal);
  writeRule(ctx.filterRules, N.KUBE_SERVICES_CHAIN, filter.comment, match, "-j", filter.target);
}

function writeExternalIPDispatch(port: PortPlan): void {
  const { ctx, sp, traffic } = port;
  const comment = quoted(`${port.name} external IP`);
  for (const extIP of sp.externalIPs) {
    const match = destinationArgs(port.proto, extIP, sp.port);
    if (traffic.hasAnyEndpoints) {
      writeRule(ctx.topNatRules, N.KUBE_SERVICES_CHAIN, comment, match, "-j", port.chains.external);
    }
    if (!traffic.external.hasEndpoints) writeExternalFilter(port, match);
  }
}

// Load-balancer traffic enters KUBE-FW instead of KUBE-EXT when source ranges apply.
function writeLoadBalancerDispatch(port: PortPlan): void {
  const { ctx, sp, traffic, chains } = port;
  const target = traffic.usesFirewallChain ? chains.firewall : chains.external;
  const comment = quoted(`${port.name} loadbalancer IP`);
  const notAccepted = quoted(`${port.name} traffic not accepted by ${chains.firewall}`);
  for (const lbIP of sp.loadBalancerVIPs) {
    const match = destinationArgs(port.proto, lbIP, sp.port);
    if (traffic.hasAnyEndpoints)
      writeRule(ctx.topNatRules, N.KUBE_SERVICES_CHAIN, comment, match, "-j", target);
    // A packet still addressed to the VIP after nat was not accepted by KUBE-FW.
    if (traffic.usesFirewallChain) {
      writeRule(ctx.filterRules, N.KUBE_PROXY_FIREWALL_CHAIN, notAccepted, match, "-j", "DROP");
    }
  }
  if (traffic.external.hasEndpoints) return;
  for (const lbIP of sp.loadBalancerVIPs)
    writeExternalFilter(port, destinationArgs(port.proto, lbIP, sp.port));
}

// NodePorts are not subject to loadBalancerSourceRanges, and never were.
function writeNodePortDispatch(port: PortPlan): void {
  const { ctx, sp, traffic, proto } = port;
  if (sp.nodePort === 0) return;
  const nodePort = String(sp.nodePort);
  if (traffic.hasAnyEndpoints) {
    const { options, topNatRules } = ctx;
    if (localhostNodePortsEnabled(options) && options.nfacctCounters?.localhostNodePortsAccepted) {
      writeRule(
        topNatRules,
        N.KUBE_NODEPORTS_CHAIN,
        port.name,
        protocolArgs(proto),
        ["-d", "127.0.0.0/8", "--dport", nodePort],
        ["-m", "nfacct", "--nfacct-name", N.LOCALHOST_NODEPORTS_NFACCT],
        "-j",
        port.chains.external,
      );
    }
    writeRule(
      topNatRules,
      N.KUBE_NODEPORTS_CHAIN,
      port.name,
      protocolArgs(proto),
      "--dport",
      nodePort,
      "-j",
      port.chains.external,
    );
  }
  if (!traffic.external.hasEndpoints) {
    writeExternalFilter(
      port,
      ["-m", "addrtype", "--dst-type", "LOCAL"],
      protocolArgs(proto),
      "--dport",
      nodePort,
    );
  }
}

// The health check must answer whether or not this node has endpoints.
function writeHealthCheckAccept(port: PortPlan): void {
  const { ctx, sp } = port;
  if (sp.healthCheckNodePort === 0) return;
  writeRule(
    ctx.filterRules,
    N.KUBE_NODEPORTS_CHAIN,
    quoted(`${port.name} health check node port`),
    protocolArgs("tcp"),
    "--dport",
    String(sp.healthCheckNodePort),
    "-j",
    "ACCEPT",
  );
}
