import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { nodeSystemCgroup } from "../stack/ebpf-places.js";

/**
 * Moves the agent into its node's system leaf (below NodePlan's `cgroup`) before it starts anything: every process
 * it starts for the node is below the node's directory (exec sessions, probes and port-forwards in the leaf, each
 * container in its pod's directory, pod-cgroups.ts), so ebpf mode, whose programs serve that directory and all
 * below it, sees every connection the node's pods make, and none of another node's. The agent's own connections
 * go to the apiserver and to pod addresses, never to a Service.
 */
export function joinNodeCgroup(cgroup: string | undefined): void {
  if (!cgroup) return;
  try {
    const leaf = nodeSystemCgroup(cgroup);
    mkdirSync(leaf, { recursive: true });
    writeFileSync(join(leaf, "cgroup.procs"), String(process.pid));
  } catch (err) {
    throw new Error(`cannot join the node's cgroup ${cgroup}: ${(err as Error).message}`);
  }
}
