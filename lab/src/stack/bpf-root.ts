// Where a lab node's proxy pins ebpf mode's maps and links (its --bpf-root). The one place the lab says it, so the
// commands that read a node's maps (explain, lb list, trace) and the proxy's deployment agree. A netns lab's nodes
// share the host's bpffs, so each lab (by its prefix, which sets two labs on one host apart) and each node in it
// gets a folder of its own, readable from the host.
import { join } from "node:path";

const bpfRootBase = "/sys/fs/bpf/switchyard";

/** The folder of the netns lab whose names start with `labPrefix`: its nodes' pin roots are in it. */
export function labBPFRoot(labPrefix: string): string {
  return join(bpfRootBase, labPrefix);
}

/** The pin root of `node`'s proxy in the netns lab whose names start with `labPrefix`. */
export function nodeBPFRoot(labPrefix: string, node: string): string {
  return join(labBPFRoot(labPrefix), node);
}
