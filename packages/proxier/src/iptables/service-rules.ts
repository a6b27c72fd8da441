// The filter rules, nat chains and nat rules of one Service port.
import type { EndpointInfo } from "../model/endpoint.js";
import { externallyAccessible, type ServicePortInfo, sourceRangesContain } from "../model/service-port.js";
import { servicePortNameString } from "../model/service-port-name.js";
import { categorizeEndpoints } from "../model/topology.js";
import { writeEndpointChains, writeServiceToEndpointRules } from "./endpoint-rules.js";
import { chainLine, type LineSink, quoted } from "./line-buffer.js";
import * as N from "./names.js";
import { type IPTablesOptions, ifLocal, ifNotLocal, localhostNodePortsEnabled } from "./options.js";

/** The nfacct counter that counts NodePort packets accepted on localhost. */
export const LOCALHOST_NODEPORTS_NFACCT = "localhost_nps_accepted_pkts";

export interface ServicePortContext {
  readonly options: IPTablesOptions;
  readonly filterRules: LineSink;
  /** Where this port's own chains go; a throw-away buffer when they are unchanged. */
  readonly natChains: LineSink;
  readonly natRules: LineSink;
  /** Top-level nat rules (KUBE-SERVICES, KUBE-NODEPORTS), written on every sync. */
  readonly topNatRules: LineSink;
  /** Collects this port's chains, written or skipped: they must exist after this sync. */
  readonly activeNATChains: { add(chain: string): unknown };
  /** Above the endpoint threshold, per-endpoint comments are left out. */
  readonly largeClusterMode: boolean;
}

export interface ServicePortOutcome {
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

/** Above the large-cluster threshold, per-endpoint comments are left out. */
export function commentArgs(ctx: Pick<ServicePortContext, "largeClusterMode">, comment: string): string[] {
  return ctx.largeClusterMode ? [] : ["-m", "comment", "--comment", comment];
}

export function writeServicePort(
  ctx: ServicePortContext,
  sp: ServicePortInfo,
  endpoints: readonly EndpointInfo[],
): ServicePortOutcome {
  const { options, filterRules, natChains, natRules, topNatRules } = ctx;
  const proto = sp.protocol.toLowerCase();
  const name = servicePortNameString(sp.name);
  const chains = N.servicePortChains(sp.name);
  const { clusterEndpoints, localEndpoints, allReachableEndpoints, hasAnyEndpoints } = categorizeEndpoints(
    endpoints,
    sp,
    options.nodeName,
    options.nodeLabels,
  );
  const matchPort = (ip: string, port: number): string[] => [
    "-m",
    proto,
    "-p",
    proto,
    "-d",
    ip,
    "--dport",
    String(port),
  ];

  const usesClusterChain = (clusterEndpoints?.length ?? 0) > 0;
  const usesLocalChain = (localEndpoints?.length ?? 0) > 0;

  // ClusterIP traffic goes straight to its policy chain; with ITP=Local and no endpoint on
  // this node there is nothing to go to and the filter table drops it instead.
  const internalChain = sp.internalPolicyLocal ? chains.localPolicy : chains.clusterPolicy;
  const hasInternal = hasAnyEndpoints && (!sp.internalPolicyLocal || usesLocalChain);
  // External traffic always enters KUBE-EXT, which short-circuits some sources before the
  // policy chain; the chain is needed even when ETP=Local finds no local endpoint.
  const externalPolicyChain = sp.externalPolicyLocal ? chains.localPolicy : chains.clusterPolicy;
  const hasExternal = hasAnyEndpoints && (!sp.externalPolicyLocal || usesLocalChain);
  const usesExternalChain = hasAnyEndpoints && externallyAccessible(sp);
  const usesFirewall =
    hasAnyEndpoints && sp.loadBalancerVIPs.length > 0 && sp.loadBalancerSourceRanges.length > 0;
  const loadBalancerChain = usesFirewall ? chains.firewall : chains.external;

  // No endpoints anywhere: REJECT; endpoints but none usable under Local policy: DROP.
  const noneComment = quoted(`${name} has no endpoints`);
  const noLocalComment = quoted(`${name} has no local endpoints`);
  const internalFilter = hasAnyEndpoints
    ? { target: "DROP", comment: noLocalComment }
    : { target: "REJECT", comment: noneComment };
  const externalFilter = internalFilter;

  if (hasInternal) {
    topNatRules.write(
      "-A",
      N.KUBE_SERVICES_CHAIN,
      "-m",
      "comment",
      "--comment",
      quoted(`${name} cluster IP`),
      matchPort(sp.clusterIP, sp.port),
      "-j",
      internalChain,
    );
  } else {
    filterRules.write(
      "-A",
      N.KUBE_SERVICES_CHAIN,
      "-m",
      "comment",
      "--comment",
      internalFilter.comment,
      matchPort(sp.clusterIP, sp.port),
      "-j",
      internalFilter.target,
    );
  }

  for (const extIP of sp.externalIPs) {
    if (hasAnyEndpoints) {
      topNatRules.write(
        "-A",
        N.KUBE_SERVICES_CHAIN,
        "-m",
        "comment",
        "--comment",
        quoted(`${name} external IP`),
        matchPort(extIP, sp.port),
        "-j",
        chains.external,
      );
    }
    if (!hasExternal) {
      filterRules.write(
        "-A",
        N.KUBE_EXTERNAL_SERVICES_CHAIN,
        "-m",
        "comment",
        "--comment",
        externalFilter.comment,
        matchPort(extIP, sp.port),
        "-j",
        externalFilter.target,
      );
    }
  }

  for (const lbIP of sp.loadBalancerVIPs) {
    if (hasAnyEndpoints) {
      topNatRules.write(
        "-A",
        N.KUBE_SERVICES_CHAIN,
        "-m",
        "comment",
        "--comment",
        quoted(`${name} loadbalancer IP`),
        matchPort(lbIP, sp.port),
        "-j",
        loadBalancerChain,
      );
    }
    if (usesFirewall) {
      // A packet still addressed to the VIP after nat was not accepted by KUBE-FW.
      filterRules.write(
        "-A",
        N.KUBE_PROXY_FIREWALL_CHAIN,
        "-m",
        "comment",
        "--comment",
        quoted(`${name} traffic not accepted by ${chains.firewall}`),
        matchPort(lbIP, sp.port),
        "-j",
        "DROP",
      );
    }
  }
  if (!hasExternal) {
    for (const lbIP of sp.loadBalancerVIPs) {
      filterRules.write(
        "-A",
        N.KUBE_EXTERNAL_SERVICES_CHAIN,
        "-m",
        "comment",
        "--comment",
        externalFilter.comment,
        matchPort(lbIP, sp.port),
        "-j",
        externalFilter.target,
      );
    }
  }

  if (sp.nodePort !== 0) {
    // NodePorts are not subject to loadBalancerSourceRanges, and never were.
    const dport = ["-m", proto, "-p", proto, "--dport", String(sp.nodePort)];
    if (hasAnyEndpoints) {
      if (localhostNodePortsEnabled(options) && options.nfacctCounters?.localhostNodePortsAccepted) {
        topNatRules.write(
          "-A",
          N.KUBE_NODEPORTS_CHAIN,
          "-m",
          "comment",
          "--comment",
          name,
          "-m",
          proto,
          "-p",
          proto,
          "-d",
          "127.0.0.0/8",
          "--dport",
          String(sp.nodePort),
          "-m",
          "nfacct",
          "--nfacct-name",
          LOCALHOST_NODEPORTS_NFACCT,
          "-j",
          chains.external,
        );
      }
      topNatRules.write(
        "-A",
        N.KUBE_NODEPORTS_CHAIN,
        "-m",
        "comment",
        "--comment",
        name,
        dport,
        "-j",
        chains.external,
      );
    }
    if (!hasExternal) {
      filterRules.write(
        "-A",
        N.KUBE_EXTERNAL_SERVICES_CHAIN,
        "-m",
        "comment",
        "--comment",
        externalFilter.comment,
        "-m",
        "addrtype",
        "--dst-type",
        "LOCAL",
        dport,
        "-j",
        externalFilter.target,
      );
    }
  }

  if (sp.healthCheckNodePort !== 0) {
    // The health check must answer whether or not this node has endpoints.
    filterRules.write(
      "-A",
      N.KUBE_NODEPORTS_CHAIN,
      "-m",
      "comment",
      "--comment",
      quoted(`${name} health check node port`),
      "-m",
      "tcp",
      "-p",
      "tcp",
      "--dport",
      String(sp.healthCheckNodePort),
      "-j",
      "ACCEPT",
    );
  }

  const outcome = {
    noLocalInternal: hasAnyEndpoints && !hasInternal,
    noLocalExternal: hasAnyEndpoints && !hasExternal,
  };

  if (hasInternal) {
    const args = [
      "-m",
      "comment",
      "--comment",
      quoted(`${name} cluster IP`),
      ...matchPort(sp.clusterIP, sp.port),
    ];
    const notLocal = ifNotLocal(options.localDetector);
    if (options.masqueradeAll) {
      natRules.write("-A", internalChain, args, "-j", N.KUBE_MARK_MASQ_CHAIN);
    } else if (notLocal) {
      // Off-cluster traffic to a ClusterIP (say, through a static route to this node) may
      // leave the node again towards the endpoint, so it must be masqueraded.
      natRules.write("-A", internalChain, args, notLocal, "-j", N.KUBE_MARK_MASQ_CHAIN);
    }
  }

  if (usesExternalChain) {
    natChains.write(chainLine(chains.external));
    ctx.activeNATChains.add(chains.external);
    if (!sp.externalPolicyLocal) {
      // Endpoints may be on another node: masquerade so the replies come back through us.
      natRules.write(
        "-A",
        chains.external,
        "-m",
        "comment",
        "--comment",
        quoted(`masquerade traffic for ${name} external destinations`),
        "-j",
        N.KUBE_MARK_MASQ_CHAIN,
      );
    } else {
      const local = ifLocal(options.localDetector);
      if (local) {
        // Pods reaching an external address behave as if they went out to the load
        // balancer and came back: no traffic policy applies to them.
        natRules.write(
          "-A",
          chains.external,
          "-m",
          "comment",
          "--comment",
          quoted(`pod traffic for ${name} external destinations`),
          local,
          "-j",
          chains.clusterPolicy,
        );
      }
      // The host's own traffic has a local source address (often the VIP itself) and
      // needs SNAT to get its replies.
      natRules.write(
        "-A",
        chains.external,
        "-m",
        "comment",
        "--comment",
        quoted(`masquerade LOCAL traffic for ${name} external destinations`),
        "-m",
        "addrtype",
        "--src-type",
        "LOCAL",
        "-j",
        N.KUBE_MARK_MASQ_CHAIN,
      );
      natRules.write(
        "-A",
        chains.external,
        "-m",
        "comment",
        "--comment",
        quoted(`route LOCAL traffic for ${name} external destinations`),
        "-m",
        "addrtype",
        "--src-type",
        "LOCAL",
        "-j",
        chains.clusterPolicy,
      );
    }
    if (hasExternal) natRules.write("-A", chains.external, "-j", externalPolicyChain);
  }

  if (usesFirewall) {
    natChains.write(chainLine(chains.firewall));
    ctx.activeNATChains.add(chains.firewall);
    // Source ranges only work for load balancers that keep the client's address.
    const head = ["-A", chains.firewall, "-m", "comment", "--comment", quoted(`${name} loadbalancer IP`)];
    for (const cidr of sp.loadBalancerSourceRanges) natRules.write(head, "-s", cidr, "-j", chains.external);
    // A VIP is often also a local address, so the node's own request to it loops back with
    // the VIP as source; allow that when the ranges allow the node.
    if (sourceRangesContain(sp, options.nodeIP)) {
      for (const lbIP of sp.loadBalancerVIPs) natRules.write(head, "-s", lbIP, "-j", chains.external);
    }
    // Falling off the end leaves the packet un-DNATed, for KUBE-PROXY-FIREWALL to drop.
    natRules.write(
      "-A",
      chains.firewall,
      "-m",
      "comment",
      "--comment",
      quoted(`other traffic to ${name} will be dropped by KUBE-PROXY-FIREWALL`),
    );
  }

  if (usesClusterChain) {
    natChains.write(chainLine(chains.clusterPolicy));
    ctx.activeNATChains.add(chains.clusterPolicy);
    writeServiceToEndpointRules(ctx, sp, chains.clusterPolicy, clusterEndpoints ?? []);
  }
  if (usesLocalChain) {
    natChains.write(chainLine(chains.localPolicy));
    ctx.activeNATChains.add(chains.localPolicy);
    writeServiceToEndpointRules(ctx, sp, chains.localPolicy, localEndpoints ?? []);
  }

  writeEndpointChains(ctx, sp, allReachableEndpoints);
  return outcome;
}
