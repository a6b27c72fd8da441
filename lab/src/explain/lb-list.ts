// `lb list`'s text: each node's service table as `cilium-dbg bpf lb list` prints it (the proxier's formatLBList),
// under a line naming the node, its proxy's mode and where its maps are pinned. Pure: the command reads the maps.
import { formatLBList, type LBListView } from "@switchyard/proxier";
import { decodeMaps, type FamilyMaps } from "./bpf-maps.js";

/** What was read of one node. */
export interface NodeMaps {
  node: string;
  /** What its proxy's /proxyMode answered ("" for nothing). */
  mode: string;
  bpfRoot: string;
  /** The families whose maps are pinned there; none when the node has no eBPF maps. */
  families: readonly FamilyMaps[];
}

function heading(n: NodeMaps): string {
  const mode = n.mode ? `${n.mode} mode` : "its proxy did not say its mode";
  if (n.families.length === 0) return `${n.node}: ${mode}, no maps pinned under ${n.bpfRoot}`;
  return `${n.node}: ${mode}, maps pinned under ${n.bpfRoot}`;
}

/** One node's part: its line, then its table (or nothing more when it has no maps), then what was not decoded. */
export function nodeLBList(n: NodeMaps, view: LBListView): string {
  if (n.families.length === 0) return heading(n);
  const decoded = n.families.map(decodeMaps);
  const problems = decoded.flatMap((d) => d.problems);
  const table = formatLBList(
    decoded.map((d) => d.contents),
    view,
  );
  return [heading(n), table, ...problems.map((p) => `! ${p}`)].join("\n");
}

/** Every node's part, a blank line between two. */
export function lbListReport(nodes: readonly NodeMaps[], view: LBListView): string {
  return nodes.map((n) => nodeLBList(n, view)).join("\n\n");
}
