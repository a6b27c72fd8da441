import type { IPFamily } from "@switchyard/basics";
import type { LBListView } from "@switchyard/proxier";
import { realExec } from "../exec.js";
import type { FamilyMaps } from "../explain/bpf-maps.js";
import { lbListReport, type NodeMaps } from "../explain/lb-list.js";
import { openLabFor, readableNode } from "../explain/open-lab.js";
import { readPinnedMaps } from "../explain/read-node.js";
import { proxyMode } from "../scenarios/kit/node-proxy.js";
import { labNode, type ScenarioLab } from "../scenarios/kit/scenario-lab.js";
import type { Command, Invocation } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";
import { UsageError } from "./usage.js";

const families: readonly IPFamily[] = ["IPv4", "IPv6"];

/** --backends or --revnat, as cilium-dbg takes them; the service table without either. */
function viewOf(inv: Invocation): LBListView {
  if (inv.bool("backends") && inv.bool("revnat"))
    throw new UsageError("lb list: --backends or --revnat, not both");
  return inv.bool("backends") ? "backends" : inv.bool("revnat") ? "revnat" : "services";
}

/** What one node's pins hold, of both families, and what its proxy says its mode is. */
async function readNode(lab: ScenarioLab, name: string): Promise<NodeMaps> {
  const node = await readableNode(lab, labNode(lab, name));
  const bpfRoot = node.bpfRoot ?? "";
  const found: FamilyMaps[] = [];
  for (const family of families) {
    const maps = await readPinnedMaps(bpfRoot, family);
    if (maps) found.push(maps);
  }
  return { node: name, mode: await proxyMode(lab.exec, node.run), bpfRoot, families: found };
}

/** `switchyard-lab lb list`: the service table of ebpf mode's maps, per node. */
async function runLBList(inv: Invocation): Promise<number> {
  const view = viewOf(inv);
  const only = inv.string("node");
  const lab = await openLabFor("lb list", labDir(inv.string("state-dir")), realExec, process.stderr);
  try {
    const names = only === undefined ? lab.nodes.map((n) => n.name) : [labNode(lab, only).name];
    const nodes = await Promise.all(names.map((name) => readNode(lab, name)));
    console.log(lbListReport(nodes, view));
    // A node asked for by name that has no maps is a failure; the lab's other nodes may run another mode.
    return only !== undefined && nodes.every((n) => n.families.length === 0) ? 1 : 0;
  } finally {
    lab.close();
  }
}

const listCommand: Command = {
  name: "list",
  summary: "each node's eBPF service table, as cilium-dbg bpf lb list prints it",
  description:
    "Reads the maps a node's proxy pinned in ebpf mode (lb4_services, lb4_backends, lb4_reverse_nat and their " +
    "lb6_ twins) and prints them as cilium-dbg bpf lb list does: each frontend and scope (/i: the internal scope, " +
    "what the node's own sockets read), slot 0 with its reverse NAT index and flags, then each slot's backend. " +
    "--backends and --revnat list those maps by id instead. Every node of the lab by default, each under a line " +
    "naming its proxy's mode and where its maps are pinned; a node with no maps says so. The maps are opened " +
    "from this host (root): a netns node's on this host's bpffs, a kind node's on its container's own, through " +
    "/proc/PID/root of the node container.",
  flags: [
    { name: "node", value: "NODE", default: "every node", help: "the node whose maps to list" },
    { name: "backends", help: "list the backends map by id (cilium-dbg's --backends)" },
    { name: "revnat", help: "list the reverse NAT map by index (cilium-dbg's --revnat)" },
    labStateDirFlag,
  ],
  examples: [
    "switchyard-lab lb list",
    "switchyard-lab lb list --node node-1",
    "switchyard-lab lb list --node node-1 --backends",
  ],
  run: runLBList,
};

export const lbCommand: Command = {
  name: "lb",
  group: "Looking inside",
  summary: "ebpf mode's load-balancing maps on the lab's nodes (lb list)",
  description:
    "The maps a node's proxy writes in ebpf mode, read from the node's pins: `lb list`, after cilium-dbg bpf lb. " +
    "explain walks one connection through the same maps.",
  subcommands: [listCommand],
  examples: ["switchyard-lab lb list --node node-1"],
};
