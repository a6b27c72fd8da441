import {
  LABEL_TOPOLOGY_ZONE,
  overloadedServices,
  setTopologyNodes,
  type TopologyCacheState,
  topologyHintsEnabled,
} from "@switchyard/slice-controller";
import type { Node, Service } from "kubernetes-types/core/v1.js";

const readyStatus = (node: Node) => node.status?.conditions?.find((c) => c.type === "Ready")?.status;

/**
 * Keeps the topology cache's per-zone CPU shares in step with the Nodes, and says which Services a
 * Node change should resync: those whose hints now overload a zone, and every Service asking for
 * Auto hints, since a change in zones can turn its hints on or off.
 */
export class NodeTopology {
  constructor(
    readonly get: () => TopologyCacheState,
    readonly set: (next: TopologyCacheState) => void,
  ) {}

  /** Only readiness, zone and CPU feed the ratios; heartbeats and other status writes do not. */
  static relevantChange(oldNode: Node, node: Node): boolean {
    return (
      readyStatus(oldNode) !== readyStatus(node) ||
      oldNode.metadata?.labels?.[LABEL_TOPOLOGY_ZONE] !== node.metadata?.labels?.[LABEL_TOPOLOGY_ZONE] ||
      oldNode.status?.allocatable?.cpu !== node.status?.allocatable?.cpu
    );
  }

  /** Recomputes the ratios from all Nodes; returns Service keys to requeue. */
  update(nodes: readonly Node[], services: readonly Service[]): string[] {
    const next = setTopologyNodes(this.get(), nodes);
    this.set(next);
    const keys = new Set(overloadedServices(next));
    for (const svc of services) {
      if (topologyHintsEnabled(svc.metadata?.annotations)) {
        keys.add(`${svc.metadata?.namespace ?? ""}/${svc.metadata?.name ?? ""}`);
      }
    }
    return [...keys];
  }
}
