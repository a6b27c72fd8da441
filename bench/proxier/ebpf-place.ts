// ebpf mode's place on the host for one proxy run: a fresh cgroup2 directory that the socket programs attach to
// (the bench's clients join it) and a fresh pin root for their links and maps. The links are pinned so that
// they outlive the process, as a restart needs; so after the proxy stops, its own `--cleanup` with the same
// flags unpins them, and then both directories go.
import { existsSync, mkdirSync, readFileSync, rmdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { startBuiltProxy } from "./built-proxy.js";
import { ENDPOINTS_PER_SERVICE } from "./cluster.js";

const BPFFS = "/sys/fs/bpf";

export interface EBPFPlace {
  readonly cgroup: string;
  readonly bpfRoot: string;
  /** The proxy's flags naming both, and sizing its maps. */
  readonly flags: readonly string[];
  /** Runs `--cleanup` in `ns`, then removes both directories; throws if anything is left. */
  remove(ns: string): Promise<void>;
}

/** The host's cgroup2 mount point (on a hybrid host, /sys/fs/cgroup/unified). */
function cgroup2Mount(): string {
  for (const line of readFileSync("/proc/self/mounts", "utf8").split("\n")) {
    const [, mountPoint, fsType] = line.split(" ");
    if (fsType === "cgroup2" && mountPoint) return mountPoint;
  }
  throw new Error("ebpf mode needs a cgroup2 mount; /proc/self/mounts has none");
}

/**
 * `--bpf-lb-map-max` for a cluster of `services` ClusterIPs × ENDPOINTS_PER_SERVICE: the service map holds a slot 0
 * and a slot per backend for each (one scope: their policies give the node and the outside the same endpoints);
 * Cilium's default (65536) when that fits, as a user would leave it, else the next power of two.
 */
export function lbMapMaxFor(services: number): number {
  const serviceEntries = services * (ENDPOINTS_PER_SERVICE + 1);
  let size = 65_536;
  while (size < serviceEntries) size *= 2;
  return size;
}

export function makeEBPFPlace(name: string, lbMapMax: number): EBPFPlace {
  const cgroup = join(cgroup2Mount(), name);
  const bpfRoot = join(BPFFS, name);
  mkdirSync(cgroup);
  const flags = [`--cgroup-root=${cgroup}`, `--bpf-root=${bpfRoot}`];
  const startFlags = [...flags, `--bpf-lb-map-max=${lbMapMax}`];
  return {
    cgroup,
    bpfRoot,
    flags: startFlags,
    async remove(ns: string) {
      const problems: string[] = [];
      const cleanup = startBuiltProxy(ns, ["--cleanup", ...flags], {}, "nsenter");
      const code = await Promise.race([cleanup.exitCode(), sleep(30_000, "timeout" as const)]);
      if (code !== 0) {
        cleanup.child.kill("SIGKILL");
        problems.push(`--cleanup ended with ${code}: ${cleanup.log().slice(-500)}`);
      }
      // Whatever --cleanup left: unlinking a pin drops the kernel's reference to its link or map.
      if (existsSync(bpfRoot)) {
        problems.push(`${bpfRoot} was left`);
        rmSync(bpfRoot, { recursive: true, force: true });
      }
      // The clients have exited; a cgroup with no process can go.
      try {
        rmdirSync(cgroup);
      } catch (err) {
        problems.push(`${cgroup}: ${(err as Error).message}`);
      }
      if (problems.length > 0) throw new Error(`ebpf clean-up: ${problems.join("; ")}`);
    },
  };
}
