import type { Node } from "kubernetes-types/core/v1.js";
import type { NodeView } from "./view-model.js";

const zoneLabel = "topology.kubernetes.io/zone";
const rolePrefix = "node-role.kubernetes.io/";

export function nodeViews(nodes: readonly Node[]): NodeView[] {
  return nodes
    .map((n) => ({
      name: n.metadata?.name ?? "",
      zone: n.metadata?.labels?.[zoneLabel] ?? "",
      ready: n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true,
      internalIP: n.status?.addresses?.find((a) => a.type === "InternalIP")?.address ?? "",
      podCIDR: n.spec?.podCIDR ?? "",
      roles: Object.keys(n.metadata?.labels ?? {})
        .filter((l) => l.startsWith(rolePrefix))
        .map((l) => l.slice(rolePrefix.length)),
    }))
    .sort((a, b) => a.name.localeCompare(b.name, "en", { numeric: true }));
}
