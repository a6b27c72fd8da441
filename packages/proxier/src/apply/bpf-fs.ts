// The two filesystems the eBPF mode stands on: bpffs, where maps and links are pinned so they outlive the proxy,
// and cgroup2, whose directory the socket programs are attached to. Both are found in /proc/self/mountinfo.

import { readFileSync } from "node:fs";
import type { Libbpf } from "./bpf-libbpf.js";

export const BPFFS_MOUNT = "/sys/fs/bpf";

export interface MountEntry {
  readonly mountPoint: string;
  readonly fsType: string;
}

/** mountinfo's octal escapes (a space is \040) back to characters. */
function unescapeMountPath(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/**
 * The mounts of a mountinfo text, in its order: the mount point is the fifth field, the filesystem type the
 * first after the " - " separator (optional fields come between).
 */
export function parseMountInfo(text: string): MountEntry[] {
  const mounts: MountEntry[] = [];
  for (const line of text.split("\n")) {
    const [before, after] = line.split(" - ");
    const fields = before?.split(" ") ?? [];
    const fsType = after?.split(" ")[0];
    const mountPoint = fields[4];
    if (mountPoint === undefined || !fsType) continue;
    mounts.push({ mountPoint: unescapeMountPath(mountPoint), fsType });
  }
  return mounts;
}

/** The mount a path lies on: the longest mount point above it, the last one mounted where two are equal. */
export function mountOf(path: string, mounts: readonly MountEntry[]): MountEntry | undefined {
  let best: MountEntry | undefined;
  for (const m of mounts) {
    const covers = m.mountPoint === "/" || path === m.mountPoint || path.startsWith(`${m.mountPoint}/`);
    if (covers && (best === undefined || m.mountPoint.length >= best.mountPoint.length)) best = m;
  }
  return best;
}

/** The first cgroup2 mount point (on a hybrid host, /sys/fs/cgroup/unified), or undefined when none. */
export function cgroup2Root(mounts: readonly MountEntry[]): string | undefined {
  return mounts.find((m) => m.fsType === "cgroup2")?.mountPoint;
}

export function readMounts(): MountEntry[] {
  return parseMountInfo(readFileSync("/proc/self/mountinfo", "utf8"));
}

/** The root of the cgroup2 hierarchy this process sees; throws a one-line error when there is none. */
export function defaultCgroupPath(): string {
  const root = cgroup2Root(readMounts());
  if (root === undefined) throw new Error("eBPF mode needs a cgroup2 mount (none in /proc/self/mountinfo)");
  return root;
}

/**
 * Makes sure `pinRoot` lies on a bpf filesystem. bpffs is mounted at /sys/fs/bpf when nothing is (as Cilium's
 * agent does); any other place must already be one.
 */
export function ensureBpffs(pinRoot: string, libbpf: Libbpf): void {
  if (mountOf(pinRoot, readMounts())?.fsType === "bpf") return;
  const underDefault = pinRoot === BPFFS_MOUNT || pinRoot.startsWith(`${BPFFS_MOUNT}/`);
  if (!underDefault) throw new Error(`eBPF pin root ${pinRoot} is not on a bpf filesystem`);
  if (libbpf.mount("bpf", BPFFS_MOUNT, "bpf") !== 0) {
    const errno = libbpf.errno();
    throw new Error(
      `cannot mount the bpf filesystem at ${BPFFS_MOUNT} (errno ${errno}); mount it by hand: mount -t bpf bpf ${BPFFS_MOUNT}`,
    );
  }
}
