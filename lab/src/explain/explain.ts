// `explain`'s pure core: a node's live ruleset and what the API says about the destination in, the report's
// text out. The command only reads them (explain-cmd.ts).

import { familyOf } from "@switchyard/basics";
import type { TracePacket } from "@switchyard/proxier/trace";
import type { Service, ServicePort } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { type LiveRuleset, loadRuleset } from "./load.js";
import { endpointNames, formatExplainReport } from "./report.js";
import { type PacketTrace, tracePacketThrough } from "./trace.js";
import { explainService, type ServiceEntry } from "./why.js";

export interface ExplainInput {
  live: LiveRuleset;
  /** Where the ruleset was read, for the report: "nft list table ip kube-proxy". */
  source: string;
  node: { name: string; labels: Readonly<Record<string, string>>; addresses: readonly string[] };
  packet: TracePacket;
  /** The packet's source and destination in words, for the report's first line. */
  from: string;
  to: string;
  /** The Service the destination belongs to, when it is one. */
  target?: { service: Service; slices: readonly EndpointSlice[]; port: ServicePort; entry: ServiceEntry };
  /** The source is a pod (of any node) or the node itself. */
  fromInside: boolean;
  /** The source is a pod of this node or the node itself: ebpf mode balances its connections at the socket. */
  onNode: boolean;
}

export interface Explained {
  text: string;
  trace: PacketTrace;
}

export function explain(input: ExplainInput): Explained {
  const origin = input.onNode ? "node" : "external";
  const trace = tracePacketThrough(loadRuleset(input.live), input.node.addresses, {
    ...input.packet,
    origin,
  });
  const t = input.target;
  const why = t
    ? explainService({
        service: t.service,
        slices: t.slices,
        port: { name: t.port.name ?? "", protocol: (t.port.protocol ?? "TCP") as "TCP" | "UDP" | "SCTP" },
        node: input.node,
        mode: input.live.mode,
        family: familyOf(input.packet.destIP),
        entry: t.entry,
        // ebpf mode short-circuits only what this node's sockets start; what comes in meets the external scope.
        fromInside: input.live.mode === "ebpf" ? input.onNode : input.fromInside,
      })
    : `no Service has ${input.to}: the ${input.live.mode === "ebpf" ? "maps" : "rules"} alone answer`;
  const text = formatExplainReport({
    from: input.from,
    to: input.to,
    node: input.node.name,
    mode: input.live.mode,
    source: input.source,
    trace,
    why,
    endpointNames: endpointNames(t?.slices ?? []),
  });
  return { text, trace };
}
