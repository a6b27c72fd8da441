// Turns what the watches and the rule reads saw into changes: each EndpointSlice write of the Service that
// makes an endpoint ready or takes one away is a change; the pod moment before it is its cause, and each node's
// first rule read after that moment to show it is when the node programmed it. No I/O: the shell feeds it.
import type { Service, ServicePort } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { ProxyMode } from "../explain/load.js";
import { explainService } from "../explain/why.js";
import type { ChangeKind, NodeProgram, TracedChange } from "./change.js";
import { readyChanges, TRIGGER_TIME } from "./endpoints.js";
import type { PodMoment } from "./pod-watch.js";
import type { RuleRead } from "./rule-poll.js";

export interface FollowedNode {
  name: string;
  labels: Readonly<Record<string, string>>;
  mode: ProxyMode;
}

export interface SliceWrite {
  at: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  slice: EndpointSlice;
}

/** Whether `node`'s rules send ClusterIP traffic to `ip` when the Service's slices are `slices`. */
function nodeUses(
  service: Service,
  port: ServicePort,
  slices: readonly EndpointSlice[],
  node: FollowedNode,
  family: "IPv4" | "IPv6",
  ip: string,
): boolean {
  const why = explainService({
    service,
    slices,
    port: { name: port.name ?? "", protocol: (port.protocol ?? "TCP") as "TCP" | "UDP" | "SCTP" },
    node,
    mode: node.mode,
    family,
    entry: "ClusterIP",
    fromInside: true,
  });
  return why.expected.some((e) => e.replace(/^\[?([^\]]*?)\]?:\d+$/, "$1") === ip);
}

/** The first read at or after `since` that shows the change. */
export function programmedAt(
  reads: readonly RuleRead[],
  ip: string,
  kind: ChangeKind,
  since: number,
): number | undefined {
  return reads.find((r) => r.at >= since && r.reaches.has(ip) === (kind === "added"))?.at;
}

const rv = (s: EndpointSlice) => Number(s.metadata?.resourceVersion ?? 0);

export class ChangeFollower {
  readonly changes: TracedChange[] = [];
  private readonly slices = new Map<string, EndpointSlice>();

  constructor(
    private readonly service: Service,
    private readonly port: ServicePort,
    private readonly nodes: readonly FollowedNode[],
    private readonly family: "IPv4" | "IPv6",
    initial: readonly EndpointSlice[],
  ) {
    for (const s of initial) this.slices.set(s.metadata?.name ?? "", s);
  }

  /**
   * Takes one slice write of the Service; returns the changes it makes. A write no newer than the state already
   * held (the watch can repeat what the initial list had) changes nothing.
   */
  write(
    w: SliceWrite,
    cause: string,
    moment: (ip: string, kind: ChangeKind) => PodMoment | undefined,
  ): TracedChange[] {
    const name = w.slice.metadata?.name ?? "";
    const held = this.slices.get(name);
    if (held && rv(held) >= rv(w.slice) && w.type !== "DELETED") return [];
    const before = [...this.slices.values()];
    if (w.type === "DELETED") this.slices.delete(name);
    else this.slices.set(name, w.slice);
    const after = [...this.slices.values()];
    const { added, removed } = readyChanges(before, after);
    const made = [
      ...added.map((ip) => this.change("added", ip, w, cause, moment, after)),
      ...removed.map((ip) => this.change("removed", ip, w, cause, moment, before)),
    ];
    this.changes.push(...made);
    return made;
  }

  private change(
    kind: ChangeKind,
    ip: string,
    w: SliceWrite,
    cause: string,
    moment: (ip: string, kind: ChangeKind) => PodMoment | undefined,
    usingSlices: readonly EndpointSlice[],
  ): TracedChange {
    const m = moment(ip, kind);
    const trigger = w.slice.metadata?.annotations?.[TRIGGER_TIME];
    const podAt = m?.at ?? (trigger ? Date.parse(trigger) : w.at);
    const nodes: NodeProgram[] = this.nodes.map((n) => ({
      node: n.name,
      ...(n.mode === "ebpf" ? { writes: "maps" as const } : {}),
      affected: nodeUses(this.service, this.port, usingSlices, n, this.family, ip),
    }));
    return {
      kind,
      cause,
      pod: m?.pod ?? "",
      ip,
      podAt,
      podSeen: m !== undefined,
      ...(m ? { podEvent: m.kind } : {}),
      ...(m?.readySince ? { readySince: m.readySince } : {}),
      slice: {
        name: w.slice.metadata?.name ?? "",
        resourceVersion: w.slice.metadata?.resourceVersion ?? "",
        ...(trigger ? { triggerTime: trigger } : {}),
        at: w.at,
      },
      nodes,
    };
  }

  /** Fills in, for every open change, the nodes whose reads now show it. */
  settle(readsOf: (node: string) => readonly RuleRead[]): void {
    for (const c of this.changes)
      for (const n of c.nodes)
        if (n.affected && n.at === undefined) {
          const at = programmedAt(readsOf(n.node), c.ip, c.kind, c.podAt);
          if (at !== undefined) n.at = at;
        }
  }
}
