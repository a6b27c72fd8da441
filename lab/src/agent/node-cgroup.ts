import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Moves the agent into its node's cgroup2 directory (LabPlan's `cgroup`) before it starts anything: every process
 * it starts for the node inherits the cgroup (containers, exec sessions, probes, port-forwards), so ebpf mode,
 * whose programs serve that directory's processes, sees every connection the node's pods make, and none of
 * another node's. The agent's own connections go to the apiserver and to pod addresses, never to a Service.
 * Pods stay in the node's directory itself for now; a cgroup per pod would be a child of it.
 */
export function joinNodeCgroup(cgroup: string | undefined): void {
  if (!cgroup) return;
  try {
    writeFileSync(join(cgroup, "cgroup.procs"), String(process.pid));
  } catch (err) {
    throw new Error(`cannot join the node's cgroup ${cgroup}: ${(err as Error).message}`);
  }
}
