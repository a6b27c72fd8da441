// Why the rules look the way they do, from the API's side: the Service port's traffic policies, its
// EndpointSlices, their hints and this node's zone, put through the proxier's own decisions
// (categorizeEndpoints, trafficPolicyPlan). The result is the set of endpoints the node's rules should send
// the packet to, which the report holds against what the trace found.
import {
  type CategorizedEndpoints,
  categorizeEndpoints,
  type EndpointInfo,
  endpointString,
  endpointsFromSlices,
  LABEL_TOPOLOGY_ZONE,
  type ServicePortInfo,
  servicePortKey,
  servicePortsFromService,
  type TrafficPolicyPlan,
  type TrafficRoute,
  topologyModeFromHints,
  trafficPolicyPlan,
} from "@switchyard/proxier";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { ProxyMode } from "./load.js";

/** How the packet reaches the Service: its ClusterIP, or one of the external ways in. */
export type ServiceEntry = "ClusterIP" | "NodePort" | "ExternalIP" | "LoadBalancer";

export interface WhyInput {
  service: Service;
  slices: readonly EndpointSlice[];
  /** The Service port's name ("" when unnamed) and protocol. */
  port: { name: string; protocol: "TCP" | "UDP" | "SCTP" };
  node: { name: string; labels: Readonly<Record<string, string>> };
  mode: ProxyMode;
  /** The packet's family: the rules of that family's table (dual-stack Services have both). */
  family: "IPv4" | "IPv6";
  entry: ServiceEntry;
  /**
   * The packet comes from a pod or from the node: external entries short-circuit it to the Cluster policy. In
   * ebpf mode only a pod of this node or the node itself (the socket programs balance it).
   */
  fromInside: boolean;
}

export interface Why {
  lines: string[];
  /** Where the API says this node's rules send the packet: "ip:port" endpoints, or REJECT / DROP. */
  expected: string[];
}

const count = (n: number, what: string) => `${n} ${what}${n === 1 ? "" : "s"}`;

function endpointCounts(eps: readonly EndpointInfo[]): string {
  const ready = eps.filter((e) => e.ready).length;
  const terminating = eps.filter((e) => !e.ready && e.serving && e.terminating).length;
  const other = eps.length - ready - terminating;
  return `${count(eps.length, "endpoint")} in the EndpointSlices: ${ready} ready, ${terminating} serving while terminating, ${other} not ready`;
}

/** How hints narrowed (or did not narrow) the endpoints this node uses. */
function hintLine(
  eps: readonly EndpointInfo[],
  node: WhyInput["node"],
  used: readonly EndpointInfo[],
): string {
  const zone = node.labels[LABEL_TOPOLOGY_ZONE] ?? "";
  const mode = topologyModeFromHints(eps, node.name, zone);
  const ready = eps.filter((e) => e.ready);
  const zoneHinted = ready.filter((e) => e.zoneHints.length > 0).length;
  if (mode === "PreferSameZone")
    return `hints: every ready endpoint has a zone hint and ${used.length} name ${zone}, ${node.name}'s zone: it uses only those`;
  if (mode === "PreferSameNode")
    return `hints: every ready endpoint has a node hint: ${node.name} uses the ${used.length} for itself`;
  if (zoneHinted === 0) return "hints: none, so every ready endpoint is used";
  if (zoneHinted < ready.length)
    return `hints: only ${zoneHinted} of ${ready.length} ready endpoints have one, so all are used (a half-hinted slice never narrows traffic)`;
  return `hints: none names ${zone || "this node's zone"} (${node.name}'s zone), so all are used`;
}

function policyLines(sp: ServicePortInfo, input: WhyInput): string[] {
  const spec = input.service.spec ?? {};
  const lines = [`internalTrafficPolicy ${spec.internalTrafficPolicy ?? "Cluster"}`];
  if (input.entry !== "ClusterIP") {
    lines[0] += `, externalTrafficPolicy ${spec.externalTrafficPolicy ?? "Cluster"}`;
    if (sp.externalPolicyLocal && input.fromInside)
      lines.push(
        "traffic from a pod or the node to an external address is short-circuited to the Cluster policy",
      );
  }
  if (sp.stickyMaxAgeSeconds > 0)
    lines.push(
      `session affinity ClientIP (${sp.stickyMaxAgeSeconds} s): a client keeps the endpoint it first got`,
    );
  return lines;
}

/**
 * The route the packet takes: internal traffic follows internalTrafficPolicy; external traffic follows
 * externalTrafficPolicy, except from a pod or the node, which the external chain sends to the Cluster policy.
 */
function routeOf(input: WhyInput, plan: TrafficPolicyPlan, cat: CategorizedEndpoints): TrafficRoute {
  if (input.entry === "ClusterIP") return plan.internal;
  if (!input.fromInside) return plan.external;
  const hasEndpoints = (cat.clusterEndpoints?.length ?? 0) > 0;
  return { policy: "cluster", hasEndpoints, noEndpointsVerdict: plan.external.noEndpointsVerdict };
}

export function explainService(input: WhyInput): Why {
  const ns = input.service.metadata?.namespace ?? "default";
  const name = input.service.metadata?.name ?? "";
  const sp = servicePortsFromService(input.service, input.family).ports.find(
    (p) => p.name.port === input.port.name && p.protocol === input.port.protocol,
  );
  if (!sp)
    return {
      lines: [`the proxy writes no rules for ${ns}/${name} port ${input.port.name || "(unnamed)"}`],
      expected: [],
    };
  const eps =
    endpointsFromSlices(ns, name, input.slices, input.family, input.node.name).get(servicePortKey(sp.name)) ??
    [];
  const cat = categorizeEndpoints(eps, sp, input.node.name, input.node.labels);
  const plan = trafficPolicyPlan(sp, cat, { firewallRequiresEndpoints: input.mode === "iptables" });
  const route = routeOf(input, plan, cat);
  const local = route.policy === "local";
  const used = (local ? cat.localEndpoints : cat.clusterEndpoints) ?? [];
  const lines = [endpointCounts(eps), ...policyLines(sp, input)];
  // ebpf mode answers a socket of the node at connect: it can refuse the connection, not drop a packet.
  const atSocket = input.mode === "ebpf" && input.fromInside;
  if (!plan.hasAnyEndpoints) {
    lines.push(
      atSocket
        ? "no endpoint is ready or serving anywhere: the proxy refuses the connection (ECONNREFUSED at connect)"
        : "no endpoint is ready or serving anywhere: the proxy rejects the traffic (ICMP port unreachable)",
    );
    return { lines, expected: ["REJECT"] };
  }
  if (!route.hasEndpoints) {
    lines.push(
      atSocket
        ? `Local policy and no usable endpoint on ${input.node.name}: the proxy refuses the connection here (ECONNREFUSED at connect; a socket hook cannot drop it)`
        : `Local policy and no usable endpoint on ${input.node.name}: the proxy drops the traffic here`,
    );
    return { lines, expected: ["DROP"] };
  }
  if (local)
    lines.push(`Local policy: only endpoints on ${input.node.name}: ${count(used.length, "endpoint")}`);
  else lines.push(hintLine(eps, input.node, used));
  if (used.every((e) => !e.ready))
    lines.push("no endpoint is ready: the serving-but-terminating ones are used instead");
  return { lines, expected: used.map(endpointString) };
}
