// One packet through a loaded ruleset, with the proxier's tracers: the paths it can take, grouped into the
// destinations it reaches with their chances, whether it is masqueraded and which rule decided that.
import type { TracePacket, TracePath, TraceStep } from "@switchyard/proxier/trace";
import { traceIPTablesPacket, tracePacket } from "@switchyard/proxier/trace";
import type { LoadedRuleset } from "./load.js";

/** One destination and everything that reaches it. */
export interface Destination {
  /** "ip:port" after DNAT, or "REJECT", "DROP", "ACCEPT" (not DNATed). */
  output: string;
  probability: number;
  masq: boolean;
  paths: TracePath[];
}

export interface PacketTrace {
  packet: TracePacket;
  paths: readonly TracePath[];
  destinations: Destination[];
  /** What could not be read or followed, deduplicated, one line each. */
  problems: string[];
}

export function tracePacketThrough(
  ruleset: LoadedRuleset,
  nodeIPs: readonly string[],
  packet: TracePacket,
): PacketTrace {
  const result =
    ruleset.mode === "nftables"
      ? tracePacket(ruleset.nft, nodeIPs, packet)
      : traceIPTablesPacket(ruleset.ipt, nodeIPs, packet);
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
