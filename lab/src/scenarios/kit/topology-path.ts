import type { Endpoint, EndpointSlice } from "@switchyard/basics";

export const nodeHints = (e: Endpoint) => (e.hints?.forNodes ?? []).map((h) => h.name);
export const zoneHints = (e: Endpoint) => (e.hints?.forZones ?? []).map((h) => h.name);

/** Which endpoints a node's proxy narrows a Service to: its own node's, its zone's, or all ready ones. */
export type TopologyPath = "node" | "zone" | "cluster";

/**
 * The proxy's rule (kube-proxy's, and switchyard-proxy's model/topology.ts) restated over slices, to say for a
 * node which path it takes: node hints only if every ready endpoint has one and one names this node; else zone
 * hints on the same terms; else no narrowing. The traffic measurements check it.
 */
export function topologyPath(slices: readonly EndpointSlice[], node: string, zone: string): TopologyPath {
  const ready = slices.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready === true);
  if (ready.length === 0) return "cluster";
  const all = (pick: (e: Endpoint) => string[]) => ready.every((e) => pick(e).length > 0);
  const some = (pick: (e: Endpoint) => string[], name: string) => ready.some((e) => pick(e).includes(name));
  if (all(nodeHints) && some(nodeHints, node)) return "node";
  if (all(zoneHints) && some(zoneHints, zone)) return "zone";
  return "cluster";
}

/** "echo-node-1@node-1/zone-a ready nodes[node-1] zones[zone-a]" per endpoint, for the report. */
export function describeHints(slices: readonly EndpointSlice[]): string[] {
  return slices
    .flatMap((s) => s.endpoints ?? [])
    .sort((a, b) => ((a.targetRef?.name ?? "") < (b.targetRef?.name ?? "") ? -1 : 1))
    .map((e) => {
      const hints = e.hints
        ? `forNodes [${nodeHints(e).join(",")}] forZones [${zoneHints(e).join(",")}]`
        : "no hints";
      return `${e.targetRef?.name ?? e.addresses[0]} on ${e.nodeName ?? "?"}/${e.zone ?? "?"}${e.conditions?.ready ? "" : " NOT READY"}: ${hints}`;
    });
}
