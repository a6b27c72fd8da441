import { existsSync, mkdirSync, readdirSync, readFileSync, rmdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Container } from "kubernetes-types/core/v1.js";
import { type CgroupLimitFiles, cgroupLimitFiles } from "./cgroup-limits.js";

/**
 * Where a node's pods get their cgroups. Every pod gets a cgroup2 directory below the node's (`pod<uid>`, one
 * child per container), so ebpf mode, attached to the node's, serves them. Limits go where the host has the
 * memory and cpu controllers: in those same directories on a cgroup2-only host, or in a copy of the tree in the
 * cgroup v1 memory and cpu hierarchies on a hybrid one (cgroup2 then has no controllers to give).
 */
export interface NodeCgroups {
  /** The node's cgroup2 directory (NodePlan's `cgroup`). */
  unified: string;
  /**
   * The node's folders in the hierarchies with the memory and cpu controllers (NodePlan's `limits`): `unified`
   * itself on a cgroup2-only host, v1 ones on a hybrid host; undefined where the host has neither (no limits).
   */
  limits?: { memory: string; cpu: string };
}

/** One container's cgroups: the directories its process joins, and its OOM kills so far. */
export interface ContainerCgroups {
  /** cgroup.procs files to write the container's pid to before it execs (sandbox-command.ts). */
  procs: string[];
  /** The kernel's count of OOM kills in the container's memory cgroup. */
  oomKills(): number;
}

/** The cgroups of one pod on this node: made as its containers start, removed once they have stopped. */
export class PodCgroups {
  private readonly name: string;

  /**
   * `podFiles`: the pod's own cgroup's limits (podCgroupLimitFiles), written when its first container is made;
   * each container's cgroup is below it, so no container exceeds the pod's.
   */
  constructor(
    private readonly node: NodeCgroups,
    podUid: string,
    private readonly podFiles: CgroupLimitFiles,
  ) {
    this.name = `pod${podUid}`;
  }

  /** The container's directories with its limits written (cgroup-limits.ts); a restart reuses them. */
  container(spec: Pick<Container, "name" | "resources">): ContainerCgroups {
    const files = cgroupLimitFiles(spec);
    const unified = join(this.node.unified, this.name, spec.name);
    const limits = this.node.limits;
    if (!limits) {
      make(unified, {});
      return { procs: [join(unified, "cgroup.procs")], oomKills: () => 0 };
    }
    if (limits.memory === this.node.unified) {
      enableControllers(this.node.unified, join(this.node.unified, this.name));
      make(join(this.node.unified, this.name), this.podFiles.unified);
      make(unified, files.unified);
      return { procs: [join(unified, "cgroup.procs")], oomKills: () => counter(unified, "memory.events") };
    }
    const memory = join(limits.memory, this.name, spec.name);
    const cpu = join(limits.cpu, this.name, spec.name);
    make(unified, {});
    make(dirname(memory), this.podFiles.memory);
    make(dirname(cpu), this.podFiles.cpu);
    make(memory, files.memory);
    make(cpu, files.cpu);
    return {
      procs: [unified, memory, cpu].map((d) => join(d, "cgroup.procs")),
      oomKills: () => counter(memory, "memory.oom_control"),
    };
  }

  /** Removes the pod's directories (its processes must have ended); one left busy stays, and the lab's down removes it. */
  remove(): void {
    const l = this.node.limits;
    for (const root of new Set([this.node.unified, ...(l ? [l.memory, l.cpu] : [])]))
      removeTree(join(root, this.name));
  }
}

/** A directory with its files written; the node's folders above it are made when missing (v1 ones are lazy). */
function make(dir: string, files: Record<string, string>): void {
  mkdirSync(dir, { recursive: true });
  for (const [file, value] of Object.entries(files)) {
    try {
      writeFileSync(join(dir, file), value);
    } catch (err) {
      // A file this kernel lacks (memory.oom.group before 4.19) is skipped; a value it refuses is not.
      if ((err as NodeJS.ErrnoException).code !== "ENOENT")
        throw new Error(`cannot write ${value} to ${join(dir, file)}: ${(err as Error).message}`);
    }
  }
}

/**
 * cgroup2 gives a child a controller only when every directory above it passes it down: +memory +cpu in the
 * subtree_control of the node's directory's ancestors and of `pod` itself. The node's directory holds no process
 * (the agent runs in a leaf below it, node-cgroup.ts), as cgroup2 requires of one that passes controllers down.
 */
function enableControllers(nodeDir: string, podDir: string): void {
  mkdirSync(podDir, { recursive: true });
  const chain: string[] = [];
  for (let d = nodeDir; existsSync(join(d, "cgroup.controllers")) && d !== dirname(d); d = dirname(d))
    chain.unshift(d);
  for (const dir of [...chain, podDir]) writeFileSync(join(dir, "cgroup.subtree_control"), "+memory +cpu");
}

/** The `oom_kill N` line of memory.events (v2) or memory.oom_control (v1); 0 when it cannot be read. */
function counter(dir: string, file: string): number {
  try {
    const match = /^oom_kill (\d+)$/m.exec(readFileSync(join(dir, file), "utf8"));
    return match ? Number(match[1]) : 0;
  } catch {
    return 0;
  }
}

/** Removes a cgroup directory and those below it, deepest first; one still holding a process is left. */
function removeTree(dir: string): void {
  let children: string[];
  try {
    children = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory())
      .map((e) => e.name);
  } catch {
    return;
  }
  for (const child of children) removeTree(join(dir, child));
  try {
    rmdirSync(dir);
  } catch {}
}
