// Which endpoints a node uses for a Service port, given traffic policies and topology hints.
import type { EndpointInfo } from "./endpoint.js";
import { endpointString } from "./endpoint.js";
import { type ServicePortInfo, usesClusterEndpoints, usesLocalEndpoints } from "./service-port.js";

export const LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone";

export type TopologyMode = "" | "PreferSameNode" | "PreferSameZone";

export interface CategorizedEndpoints {
  /**
   * Endpoints for Cluster traffic policy: ready ones (filtered by hints when hints apply),
   * else serving-terminating ones anywhere. Undefined when the port never uses Cluster policy.
   */
  readonly clusterEndpoints: readonly EndpointInfo[] | undefined;
  /**
   * Endpoints for Local policy: this node's ready ones, else its serving-terminating ones;
   * hints never apply. Undefined when the port never uses Local policy or none qualify.
   */
  readonly localEndpoints: readonly EndpointInfo[] | undefined;
  /** Union of the two lists: every endpoint this node may route to (gets an endpoint chain). */
  readonly allReachableEndpoints: readonly EndpointInfo[];
  /** Some usable endpoint exists somewhere in the cluster, even if none is reachable from here. */
  readonly hasAnyEndpoints: boolean;
}

/**
 * Picks the topology mode from the ready endpoints' hints: same-node when every ready
 * endpoint has a node hint and one names this node; else same-zone when every ready
 * endpoint has a zone hint and one names this node's zone; else no filtering. A partial
 * set of hints is ignored, so a half-updated slice never narrows traffic.
 */
export function topologyModeFromHints(
  endpoints: readonly EndpointInfo[],
  nodeName: string,
  zone: string,
): TopologyMode {
  let hasReady = false;
  let allNodeHints = true;
  let forThisNode = false;
  let allZoneHints = true;
  let forThisZone = false;
  for (const ep of endpoints) {
    if (!ep.ready) continue;
    hasReady = true;
    if (ep.nodeHints.length === 0) allNodeHints = false;
    else if (ep.nodeHints.includes(nodeName)) forThisNode = true;
    if (ep.zoneHints.length === 0) allZoneHints = false;
    else if (ep.zoneHints.includes(zone)) forThisZone = true;
  }
  if (!hasReady) return "";
  if (allNodeHints && forThisNode) return "PreferSameNode";
  if (allZoneHints && forThisZone) return "PreferSameZone";
  return "";
}

function availableForTopology(ep: EndpointInfo, mode: TopologyMode, nodeName: string, zone: string): boolean {
  if (mode === "PreferSameNode") return ep.nodeHints.includes(nodeName);
  if (mode === "PreferSameZone") return ep.zoneHints.includes(zone);
  return true;
}

/**
 * Splits a port's endpoints into the Cluster-policy and Local-policy sets for this node,
 * the union of the two, and whether any usable endpoint exists at all. "Usable" means ready,
 * falling back (separately for Cluster and Local) to serving-and-terminating endpoints.
 */
export function categorizeEndpoints(
  endpoints: readonly EndpointInfo[],
  svcPort: ServicePortInfo,
  nodeName: string,
  nodeLabels: Readonly<Record<string, string>>,
): CategorizedEndpoints {
  let clusterEndpoints: EndpointInfo[] | undefined;
  let localEndpoints: EndpointInfo[] | undefined;
  let hasAnyEndpoints = false;
  if (endpoints.length === 0) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: [], hasAnyEndpoints };
  }

  let mode: TopologyMode = "";
  if (usesClusterEndpoints(svcPort)) {
    const zone = nodeLabels[LABEL_TOPOLOGY_ZONE] ?? "";
    mode = topologyModeFromHints(endpoints, nodeName, zone);
    clusterEndpoints = endpoints.filter((ep) => ep.ready && availableForTopology(ep, mode, nodeName, zone));
    // Topology was already ignored if it left no ready endpoint, so an empty list here
    // means nothing is ready anywhere: fall back to endpoints that are still serving.
    if (clusterEndpoints.length === 0)
      clusterEndpoints = endpoints.filter((ep) => ep.serving && ep.terminating);
    hasAnyEndpoints = clusterEndpoints.length > 0;
  }

  if (!usesLocalEndpoints(svcPort)) {
    return {
      clusterEndpoints,
      localEndpoints,
      allReachableEndpoints: clusterEndpoints ?? [],
      hasAnyEndpoints,
    };
  }

  let hasLocalReady = false;
  let hasLocalServingTerminating = false;
  for (const ep of endpoints) {
    if (ep.ready) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalReady = true;
    } else if (ep.serving && ep.terminating) {
      hasAnyEndpoints = true;
      if (ep.isLocal) hasLocalServingTerminating = true;
    }
  }
  let localFallback = false;
  if (hasLocalReady) {
    localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.ready);
  } else if (hasLocalServingTerminating) {
    localFallback = true;
    localEndpoints = endpoints.filter((ep) => ep.isLocal && ep.serving && ep.terminating);
  }

  if (!clusterEndpoints) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: localEndpoints ?? [], hasAnyEndpoints };
  }
  // With no topology filtering and only ready local endpoints, the cluster list already
  // holds every local one.
  if (mode === "" && !localFallback) {
    return { clusterEndpoints, localEndpoints, allReachableEndpoints: clusterEndpoints, hasAnyEndpoints };
  }
  const union = new Map<string, EndpointInfo>();
  for (const ep of [...clusterEndpoints, ...(localEndpoints ?? [])]) union.set(endpointString(ep), ep);
  return { clusterEndpoints, localEndpoints, allReachableEndpoints: [...union.values()], hasAnyEndpoints };
}
