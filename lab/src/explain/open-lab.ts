// The running lab as `explain`, `lb list` and `trace` see it: the scenarios' ScenarioLab, on either runtime. None
// of them starts workloads of its own images, so a kind lab's image loading is left out.

import type { ProgressSink } from "@switchyard/testbed/progress";
import type { Exec } from "../exec.js";
import { kindEbpfPlaces } from "../kind/ebpf-mounts.js";
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

/**
 * A node of the lab as the node reads reach it: its shell, and its maps' pin root as this host opens it. A netns
 * node pins on this host's bpffs; a kind node on its container's own, which this host reaches below the root of
 * the container's first process (/proc/PID/root), as root.
 */
export async function readableNode(lab: ScenarioLab, node: LabNode): Promise<ReadableNode> {
  if (lab.runtime === "netns") return { run: node.run, bpfRoot: nodeBPFRoot(lab.prefix, node.name) };
  const pid = await kindNodePid(lab.exec, node);
  return { run: node.run, ...(pid ? { bpfRoot: `/proc/${pid}/root${kindEbpfPlaces.pinRoot}` } : {}) };
}

/** The kind node container's first process, as the engine reports it; undefined when it is not running. */
async function kindNodePid(exec: Exec, node: LabNode): Promise<string | undefined> {
  // A kind node's shell is `docker exec <container>`, and the container is named after the node.
  const [docker = "docker"] = node.run;
  const pid = (
    await exec([docker, "inspect", "--format", "{{.State.Pid}}", node.name]).catch(() => "")
  ).trim();
  return /^[1-9][0-9]*$/.test(pid) ? pid : undefined;
}
