// One endpoint change followed from the pod to every node's kernel: what `trace` measures and prints.

export type ChangeKind = "added" | "removed";

/** When one node's rules reflected the change. */
export interface NodeProgram {
  node: string;
  /** What its proxy writes, so the timeline names it: rules, or in ebpf mode maps. */
  writes?: "rules" | "maps";
  /** false: by its traffic policy and hints this node never sends the Service's traffic to the endpoint. */
  affected: boolean;
  /** When the node's rules were first seen to reflect the change (ms since the epoch); absent: not within the wait. */
  at?: number;
  /** The proxy's own figure for the syncs meanwhile: the mean of its network programming duration observations. */
  proxySeconds?: number;
  /** How many observations that mean is of. */
  proxyObservations?: number;
}

export interface TracedChange {
  kind: ChangeKind;
  /** What made the change: "scaled Deployment default/echo 3 → 4", or "seen" for --watch. */
  cause: string;
  /** "namespace/name", or "" when the pod was not seen (only its endpoint). */
  pod: string;
  ip: string;
  /** When the pod change was seen (ms): Ready (added) or its deletion (removed); the slice's trigger time when unseen. */
  podAt: number;
  podSeen: boolean;
  /** What the pod did, when seen: became Ready, lost readiness, or began its deletion. */
  podEvent?: "ready" | "unready" | "deleting";
  /** The Ready condition's lastTransitionTime (whole seconds, as the API keeps it). */
  readySince?: string;
  /** The EndpointSlice write that carried the change, as the watch delivered it. */
  slice?: { name: string; resourceVersion: string; triggerTime?: string; at: number };
  nodes: NodeProgram[];
}

/** A change is complete when every affected node has programmed it. */
export const isComplete = (c: TracedChange) =>
  c.slice !== undefined && c.nodes.every((n) => !n.affected || n.at !== undefined);
