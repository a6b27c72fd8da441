// One packet through a loaded ruleset, with the proxier's tracers: the paths it can take, grouped into the
// destinations it reaches with their chances, whether it is masqueraded and which rule decided that.
import type { TracePacket, TracePath, TraceResult, TraceStep } from "@switchyard/proxier/trace";
import { traceEBPF, traceIPTablesPacket, tracePacket } from "@switchyard/proxier/trace";
import type { LoadedRuleset } from "./load.js";

/**
 * The packet, and where its connection starts: on the node whose rules are read (a pod of that node, or the node
 * itself) or anywhere else. The rule tracers work that out from the addresses; ebpf mode's programs differ for
 * each (the node's sockets read the internal scope where a frontend has two, the tc program the external one), so it
 * is said here.
 */
export interface ExplainPacket extends TracePacket {
  readonly origin: "node" | "external";
}

/** One destination and everything that reaches it. */
export interface Destination {
  /** "ip:port" after DNAT, or "REJECT", "DROP", "ACCEPT" (not DNATed). */
  output: string;
  probability: number;
  masq: boolean;
  paths: TracePath[];
}

export interface PacketTrace {
  packet: ExplainPacket;
  paths: readonly TracePath[];
  destinations: Destination[];
  /** What could not be read or followed, deduplicated, one line each. */
  problems: string[];
}

function traceThrough(
  ruleset: LoadedRuleset,
  nodeIPs: readonly string[],
  packet: ExplainPacket,
): TraceResult {
  switch (ruleset.mode) {
    case "nftables":
      return tracePacket(ruleset.nft, nodeIPs, packet);
    case "iptables":
      return traceIPTablesPacket(ruleset.ipt, nodeIPs, packet);
    case "ebpf":
      return traceEBPF(ruleset.contents, packet);
  }
}

export function tracePacketThrough(
  ruleset: LoadedRuleset,
  nodeIPs: readonly string[],
  packet: ExplainPacket,
): PacketTrace {
  const result = traceThrough(ruleset, nodeIPs, packet);
  const byOutput = new Map<string, Destination>();
  for (const path of result.paths) {
    const d = byOutput.get(path.output) ?? { output: path.output, probability: 0, masq: false, paths: [] };
    d.probability += path.probability;
    d.masq ||= path.masq;
    d.paths.push(path);
    byOutput.set(path.output, d);
  }
  const problems = [...new Set([...ruleset.problems, ...result.errors.map((e) => `not followed: ${e}`)])];
  return { packet, paths: result.paths, destinations: [...byOutput.values()], problems };
}

/** Marks the packet for masquerading: nftables sets the bit inline, iptables jumps to KUBE-MARK-MASQ. */
const marks = (s: TraceStep) => /\bmark set mark or\b/.test(s.rule) || /-j KUBE-MARK-MASQ\b/.test(s.rule);
/** Masquerades without a mark: nftables' hairpin rule. */
const hairpin = (s: TraceStep) => /@hairpin-connections masquerade\b/.test(s.rule);

/** The rule that made a path masquerade: the one that marked it, or the hairpin rule; undefined if none. */
export function masqueradeCause(path: TracePath): TraceStep | undefined {
  if (!path.masq) return undefined;
  return path.steps.find(marks) ?? path.steps.find(hairpin);
}
