// The running lab as `explain`, `lb list` and `trace` see it: the scenarios' ScenarioLab, on either runtime. None
// of them starts workloads of its own images, so a kind lab's image loading is left out.

import type { ProgressSink } from "@switchyard/testbed/progress";
import type { Exec } from "../exec.js";
import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { readLabRuntime } from "../netns/state.js";
import { type LabNode, openLab, type ScenarioLab } from "../scenarios/kit/scenario-lab.js";
import { nodeBPFRoot } from "../stack/bpf-root.js";
import type { ReadableNode } from "./read-node.js";

export async function openLabFor(
  command: string,
  stateDir: string,
  exec: Exec,
  out: ProgressSink,
): Promise<ScenarioLab> {
  const runtime = readLabRuntime(stateDir);
  if (runtime === undefined) throw new Error(`${command}: no lab in ${stateDir}; run switchyard-lab up`);
  const kind =
    runtime === "kind"
      ? { docker: (await kindToolsOnThisMachine(out)).docker, loadImages: async () => {} }
      : undefined;
  return openLab({ stateDir, params: new Map(), out, exec, ...(kind ? { kind } : {}) }, command);
}

/** A node of the lab as the node reads reach it: its shell, and its maps' pin root when this host can open it. */
export function readableNode(lab: ScenarioLab, node: LabNode): ReadableNode {
  return {
    run: node.run,
    ...(lab.runtime === "netns" ? { bpfRoot: nodeBPFRoot(lab.prefix, node.name) } : {}),
  };
}
