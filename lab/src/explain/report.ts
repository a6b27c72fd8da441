// `explain`'s text: the rules the packet matched (the part every path shares, then each path's own), where it
// ends up and how likely, whether it is masqueraded and by which rule, and the API's side of the story. In ebpf
// mode the same, with the map entries the connection met in place of rules.
import type { TracePath, TraceStep } from "@switchyard/proxier/trace";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { ProxyMode } from "./load.js";
import { type Destination, masqueradeCause, type PacketTrace } from "./trace.js";
import type { Why } from "./why.js";

export interface ExplainReport {
  /** "tcp 10.244.1.20 (pod default/client on node-1)". */
  from: string;
  /** "10.96.0.50:80 (Service default/hinted, port http)". */
  to: string;
  node: string;
  mode: ProxyMode;
  /** Where the rules were read: "table ip kube-proxy", "iptables-save (filter, nat)", or the maps' pin root. */
  source: string;
  trace: PacketTrace;
  /** The API's side, when the destination is a Service; else why not. */
  why: Why | string;
  /** Who each endpoint address is, from the slices' targetRefs: "pod default/web-1 on node-2 (zone-b)". */
  endpointNames: ReadonlyMap<string, string>;
}

/** Percent with one decimal, without a trailing ".0" lost: 33.3%, 50.0%, 100.0%. */
export const percent = (p: number) => `${(p * 100).toFixed(1)}%`;

/** How many steps all paths share (same rule and same note). */
function sharedSteps(paths: readonly TracePath[]): number {
  const first = paths[0]?.steps ?? [];
  let n = 0;
  const same = (a?: TraceStep, b?: TraceStep) =>
    a !== undefined && b !== undefined && a.chain === b.chain && a.rule === b.rule && a.note === b.note;
  while (n < first.length && paths.every((p) => same(p.steps[n], first[n]))) n++;
  return n;
}

/** What the proxy wrote, as the report names it: rules, or the map entries of ebpf mode. */
const written = (mode: ProxyMode) => (mode === "ebpf" ? "maps" : "rules");

/** A step: iptables names the table and chain; ebpf the program, then the map and the entry's key. */
function stepLines(step: TraceStep, mode: ProxyMode, indent: string): string[] {
  if (mode === "ebpf") {
    const lines = [`${indent}${step.chain}: ${step.table} ${step.rule}`];
    if (step.note !== undefined) lines.push(`${indent}    → ${step.note}`);
    return lines;
  }
  const where = mode === "iptables" ? `${step.table} ${step.chain}` : step.chain;
  const comment = step.comment === undefined ? "" : `   # ${step.comment}`;
  const lines = [`${indent}${where}: ${step.rule}${comment}`];
  if (step.note !== undefined) lines.push(`${indent}    → ${step.note}`);
  return lines;
}

function pathLines(r: ExplainReport): string[] {
  const paths = r.trace.paths;
  const shared = sharedSteps(paths);
  const lines = [
    r.mode === "ebpf" ? "map entries the connection met, in order:" : "rules the packet matched, in order:",
  ];
  for (const s of (paths[0]?.steps ?? []).slice(0, shared)) lines.push(...stepLines(s, r.mode, "  "));
  if (paths.length <= 1) return lines;
  lines.push(`then one of ${paths.length} ways, chosen at random per connection:`);
  // With many endpoints the ways differ only in the address: show the first in full, the rest in one line.
  const detailed = paths.length <= 4 ? paths.length : 1;
  paths.forEach((p, i) => {
    lines.push(`  ${percent(p.probability)} → ${p.output}${p.masq ? " (masqueraded)" : ""}`);
    const own = p.steps.slice(shared);
    if (i < detailed) for (const s of own) lines.push(...stepLines(s, r.mode, "      "));
    else if (own[0]?.note) lines.push(`      ${own[0].chain}: ${own[0].note}`);
  });
  return lines;
}

function destinationLine(d: Destination, names: ReadonlyMap<string, string>): string {
  const ip = d.output.replace(/^\[?([^\]]*?)\]?:\d+$/, "$1");
  const who = names.get(ip);
  return `  ${d.output.padEnd(21)} ${percent(d.probability).padStart(6)}${who ? `  ${who}` : ""}`;
}

/**
 * ebpf mode rewrites no packet from the node's own sockets; what comes from outside is SNATed unless the
 * frontend's external policy is Local (slot 0's EXTERNAL_LOCAL), which the tracer reads.
 */
function ebpfMasqueradeLines(trace: PacketTrace): string[] {
  if (trace.packet.origin === "node")
    return ["masquerade: no (balanced when the socket connects: no packet is rewritten, the source stays)"];
  if (!trace.paths.some((p) => p.masq))
    return ["masquerade: no (external policy Local: the frontend's slot 0 has EXTERNAL_LOCAL)"];
  return ["masquerade: yes (from outside the node, and the frontend's slot 0 has no EXTERNAL_LOCAL)"];
}

function masqueradeLines(trace: PacketTrace, mode: ProxyMode): string[] {
  if (mode === "ebpf") return ebpfMasqueradeLines(trace);
  const masqueraded = trace.paths.filter((p) => p.masq);
  if (masqueraded.length === 0) return ["masquerade: no (no rule marked the packet for SNAT)"];
  const scope =
    masqueraded.length === trace.paths.length
      ? "yes"
      : `on ${masqueraded.length} of ${trace.paths.length} ways`;
  const causes = new Map<string, TraceStep>();
  for (const p of masqueraded) {
    const cause = masqueradeCause(p);
    if (cause) causes.set(`${cause.chain} ${cause.rule}`, cause);
  }
  const lines = [`masquerade: ${scope} (SNAT to the node's address on the way out), because of:`];
  for (const c of causes.values())
    lines.push(`  ${c.chain}: ${c.rule}${c.comment === undefined ? "" : `   # ${c.comment}`}`);
  return lines;
}

function agreement(trace: PacketTrace, expected: readonly string[], mode: ProxyMode): string {
  const found = trace.destinations.map((d) => d.output).sort();
  const want = [...expected].sort();
  if (found.join(",") === want.join(","))
    return `the ${written(mode)} agree with the EndpointSlices: ${want.join(", ") || "nothing"}`;
  return `the ${written(mode)} differ from the EndpointSlices: they send to ${found.join(", ")}, the slices say ${want.join(", ") || "nothing"} (the proxy has not synced the latest change yet, or it sees other slices)`;
}

/** Which of ebpf mode's two readers met the connection: the tc program, for one from outside the node. */
function externalScopeNote(r: ExplainReport): string[] {
  if (r.mode !== "ebpf" || r.trace.packet.origin !== "external") return [];
  return [
    "",
    `note: this connection starts outside ${r.node}, so it meets the maps' external scope, which the tc program on`,
    "  the node's devices reads: it hands the kernel's conntrack the NAT (the packet is rewritten, not the socket)",
  ];
}

export function formatExplainReport(r: ExplainReport): string {
  const lines = [
    `explain: ${r.from} → ${r.to}`,
    `${`${written(r.mode)}:`.padEnd(9)}${r.node}'s kernel, ${r.mode} mode (${r.source})`,
    "",
    ...pathLines(r),
    "",
    "reaches:",
    ...r.trace.destinations.map((d) => destinationLine(d, r.endpointNames)),
    ...masqueradeLines(r.trace, r.mode),
    ...externalScopeNote(r),
    "",
  ];
  if (typeof r.why === "string") lines.push(`why: ${r.why}`);
  else
    lines.push(
      "why (from the API):",
      ...r.why.lines.map((l) => `  ${l}`),
      `  ${agreement(r.trace, r.why.expected, r.mode)}`,
    );
  if (r.trace.problems.length > 0) {
    lines.push("", `not read or not followed (${r.trace.problems.length}); the result may be incomplete:`);
    lines.push(...r.trace.problems.map((p) => `  ${p}`));
  }
  return lines.join("\n");
}

/** "pod NS/NAME on NODE (ZONE)" for every endpoint address of the slices. */
export function endpointNames(slices: readonly EndpointSlice[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const s of slices)
    for (const e of s.endpoints ?? []) {
      const ref = e.targetRef;
      const who = ref ? `${(ref.kind ?? "").toLowerCase()} ${ref.namespace}/${ref.name}` : "endpoint";
      const where = e.nodeName ? ` on ${e.nodeName}${e.zone ? ` (${e.zone})` : ""}` : "";
      for (const a of e.addresses) names.set(a, `${who}${where}`);
    }
  return names;
}
