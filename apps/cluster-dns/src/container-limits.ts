// The CPU and memory a container may use, from its cgroups, the way Go's runtime reads the CPU limit for
// GOMAXPROCS (internal/runtime/cgroup): the process's cgroup from /proc/self/cgroup, where that hierarchy is
// mounted from /proc/self/mountinfo, and the lowest limit on the way from the cgroup up to the mount's root.
// cgroup v1 (cpu.cfs_quota_us / cpu.cfs_period_us, memory.limit_in_bytes) and v2 (cpu.max, memory.max).
import { readFileSync } from "node:fs";

export interface ContainerLimits {
  /** CPU bandwidth in cores (quota / period); absent without a limit. */
  cpus?: number;
  /** Memory limit in bytes; absent without a limit. */
  memoryBytes?: number;
}

/** Reads a file, or undefined when it is not there (or not readable). Tests hand in their own. */
export type ReadFile = (path: string) => string | undefined;

const readHostFile: ReadFile = (path) => {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
};

/** cgroup v1 reports "no limit" as a page-aligned 2^63-1; anything this large means none. */
const NO_MEMORY_LIMIT = 2 ** 60;

interface Mount {
  version: 1 | 2;
  /** The cgroup path the mount shows as its root (not "/" inside a cgroup namespace's bind mounts). */
  root: string;
  point: string;
  /** v1: the controllers the hierarchy holds. */
  controllers: string[];
}

/** cgroup mounts from /proc/self/mountinfo: `id parent dev root point opts [tags] - fstype source superopts`. */
export function cgroupMounts(mountinfo: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of mountinfo.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    const fields = left.split(" ");
    const [fstype, , superopts = ""] = right.split(" ");
    const root = unescapeMount(fields[3] ?? "");
    const point = unescapeMount(fields[4] ?? "");
    if (fstype === "cgroup2") mounts.push({ version: 2, root, point, controllers: [] });
    else if (fstype === "cgroup") mounts.push({ version: 1, root, point, controllers: superopts.split(",") });
  }
  return mounts;
}

/** mountinfo writes space, tab, newline and backslash in paths as octal escapes. */
function unescapeMount(path: string): string {
  return path.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** The folder of this process's cgroup for `controller`, v1 first (as the kernel accounts it), then v2. */
export function controllerDir(controller: string, cgroupFile: string, mounts: Mount[]): string | undefined {
  const lines = cgroupFile
    .split("\n")
    .map((l) => /^(\d+):([^:]*):(.*)$/.exec(l))
    .filter((m): m is RegExpExecArray => m !== null);
  const v1 = lines.find((m) => (m[2] ?? "").split(",").includes(controller));
  if (v1) {
    const mount = mounts.find((m) => m.version === 1 && m.controllers.includes(controller));
    return mount && under(mount, v1[3] ?? "/");
  }
  const v2 = lines.find((m) => m[1] === "0" && m[2] === "");
  const mount = mounts.find((m) => m.version === 2);
  return v2 && mount ? under(mount, v2[3] ?? "/") : undefined;
}

/** The folder of cgroup `path` below `mount`, when the mount shows it. */
function under(mount: Mount, path: string): string | undefined {
  const root = mount.root === "/" ? "" : mount.root;
  if (root && path !== root && !path.startsWith(`${root}/`)) return undefined;
  const rest = path.slice(root.length).replace(/^\/+/, "");
  return rest ? `${mount.point}/${rest}` : mount.point;
}

/** The folder and each parent up to the mount point, where a lower limit may be set. */
function upToMount(dir: string, mounts: Mount[]): string[] {
  const point = mounts.map((m) => m.point).find((p) => dir === p || dir.startsWith(`${p}/`)) ?? dir;
  const dirs = [dir];
  for (let d = dir; d !== point && d.includes("/"); ) {
    d = d.slice(0, d.lastIndexOf("/"));
    dirs.push(d);
  }
  return dirs;
}

/** Cores one cgroup folder allows: v1 cfs quota / period, or v2 cpu.max; undefined for none. */
export function cpuLimitAt(dir: string, read: ReadFile): number | undefined {
  const max = read(`${dir}/cpu.max`)?.trim().split(/\s+/);
  if (max && max[0] !== "max") {
    const [quota, period] = max.map(Number);
    return quota && period && quota > 0 ? quota / period : undefined;
  }
  const quota = Number(read(`${dir}/cpu.cfs_quota_us`)?.trim());
  const period = Number(read(`${dir}/cpu.cfs_period_us`)?.trim());
  return quota > 0 && period > 0 ? quota / period : undefined;
}

/** Bytes one cgroup folder allows: v2 memory.max or v1 memory.limit_in_bytes; undefined for none. */
export function memoryLimitAt(dir: string, read: ReadFile): number | undefined {
  const text = read(`${dir}/memory.max`) ?? read(`${dir}/memory.limit_in_bytes`);
  const bytes = Number(text?.trim());
  return Number.isFinite(bytes) && bytes > 0 && bytes < NO_MEMORY_LIMIT ? bytes : undefined;
}

function lowest(dirs: string[], at: (dir: string) => number | undefined): number | undefined {
  let min: number | undefined;
  for (const dir of dirs) {
    const v = at(dir);
    if (v !== undefined && (min === undefined || v < min)) min = v;
  }
  return min;
}

/** This process's CPU and memory limits; none are reported where the files cannot be read. */
export function readContainerLimits(read: ReadFile = readHostFile): ContainerLimits {
  const mounts = cgroupMounts(read("/proc/self/mountinfo") ?? "");
  const cgroupFile = read("/proc/self/cgroup") ?? "";
  const limits: ContainerLimits = {};
  const cpuDir = controllerDir("cpu", cgroupFile, mounts);
  const cpus = cpuDir ? lowest(upToMount(cpuDir, mounts), (d) => cpuLimitAt(d, read)) : undefined;
  if (cpus !== undefined) limits.cpus = cpus;
  const memoryDir = controllerDir("memory", cgroupFile, mounts);
  const memoryBytes = memoryDir
    ? lowest(upToMount(memoryDir, mounts), (d) => memoryLimitAt(d, read))
    : undefined;
  if (memoryBytes !== undefined) limits.memoryBytes = memoryBytes;
  return limits;
}
