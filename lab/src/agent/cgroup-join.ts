import { readFileSync } from "node:fs";
import { join } from "node:path";

/** One line of /proc/<pid>/cgroup: the hierarchy (its controllers, or "" for cgroup2) and the path in it. */
interface Membership {
  controllers: string;
  path: string;
}

function memberships(procCgroup: string): Membership[] {
  return procCgroup
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [, controllers = "", ...rest] = line.split(":");
      return { controllers, path: rest.join(":") };
    });
}

/** Where a hierarchy is mounted (its mount point, and the hierarchy's path at that point) per mountinfo. */
function mountOf(controllers: string, mountinfo: string): { point: string; root: string } | undefined {
  for (const line of mountinfo.split("\n")) {
    const [before, after] = line.split(" - ");
    const fields = before?.split(" ") ?? [];
    const [fstype, , options = ""] = after?.split(" ") ?? [];
    const root = fields[3];
    const point = fields[4];
    if (!root || !point) continue;
    if (controllers === "" && fstype === "cgroup2") return { point, root };
    const wanted = controllers.split(",");
    if (fstype === "cgroup" && controllers !== "" && wanted.every((c) => options.split(",").includes(c)))
      return { point, root };
  }
  return undefined;
}

/**
 * The cgroup.procs files that put a process where the container's process is, in every hierarchy where it is
 * somewhere else than the agent (the container's own cgroups: cgroup2's, and v1 memory and cpu on a hybrid host),
 * as a runtime's exec joins the container's cgroups. Pure: both /proc/<pid>/cgroup texts and the agent's mountinfo.
 */
export function cgroupJoinFiles(container: string, agent: string, mountinfo: string): string[] {
  const own = new Map(memberships(agent).map((m) => [m.controllers, m.path]));
  const files: string[] = [];
  for (const m of memberships(container)) {
    if (own.get(m.controllers) === m.path) continue;
    const mount = mountOf(m.controllers, mountinfo);
    if (!mount || !(m.path === mount.root || m.path.startsWith(`${mount.root.replace(/\/$/, "")}/`)))
      continue;
    files.push(join(mount.point, m.path.slice(mount.root.length), "cgroup.procs"));
  }
  return files;
}

/** cgroupJoinFiles for a running process and this agent; none when /proc cannot say. */
export function containerCgroupFiles(pid: number): string[] {
  try {
    const read = (file: string) => readFileSync(file, "utf8");
    return cgroupJoinFiles(
      read(`/proc/${pid}/cgroup`),
      read("/proc/self/cgroup"),
      read("/proc/self/mountinfo"),
    );
  } catch {
    return [];
  }
}

/**
 * The argv that joins those cgroups, then execs `argv`: a shell that writes its own pid into each file (one the
 * kernel refuses is skipped: the command still runs, as before), so the command and all it starts are counted there.
 */
export function joinCgroupsArgv(files: readonly string[], argv: readonly string[]): string[] {
  if (files.length === 0) return [...argv];
  const script =
    'n=$1; shift; while [ "$n" -gt 0 ]; do echo $$ 2>/dev/null >"$1"; shift; n=$((n-1)); done; exec "$@"';
  return ["/bin/sh", "-c", script, "sy-exec", String(files.length), ...files, ...argv];
}
