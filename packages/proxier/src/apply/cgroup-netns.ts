// The network namespaces a cgroup's processes live in, and a way to run a call inside one. A socket iterator sees
// the sockets of the namespace it was created in only, so whatever must reach every socket the socket programs
// balanced runs once per namespace of the processes below the cgroup they are attached to (pods have their own).
// Processes are found through /proc, so the proxy must share the node's PID namespace (hostPID in a pod): from
// another, cgroup.procs shows the node's processes as 0 or not at all, and they are skipped.

import { closeSync, openSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { errnoText, type Libbpf } from "./bpf-libbpf.js";

const CLONE_NEWNET = 0x40000000;

/** One network namespace, by a path that opens it while the process named in it lives. */
export interface NetnsRef {
  /** /proc/PID/ns/net of one process inside it. */
  readonly path: string;
  /** "device:inode" of the namespace: equal for two processes in one namespace. */
  readonly id: string;
}

/** The process ids in `cgroupPath` and every cgroup below it. */
export function cgroupProcesses(cgroupPath: string): number[] {
  const pids: number[] = [];
  const visit = (dir: string) => {
    let procs = "";
    try {
      procs = readFileSync(join(dir, "cgroup.procs"), "utf8");
    } catch {
      return; // removed while we walked
    }
    for (const line of procs.split("\n")) if (line !== "") pids.push(Number(line));
    let children: string[] = [];
    try {
      children = readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isDirectory())
        .map((e) => e.name);
    } catch {
      return;
    }
    for (const child of children) visit(join(dir, child));
  };
  visit(cgroupPath);
  return pids;
}

/**
 * The distinct network namespaces of the processes below `cgroupPath`, in the order first met. A process that
 * exits meanwhile is skipped: its sockets close with it.
 */
export function cgroupNetworkNamespaces(cgroupPath: string): NetnsRef[] {
  const seen = new Map<string, NetnsRef>();
  for (const pid of cgroupProcesses(cgroupPath)) {
    const path = `/proc/${pid}/ns/net`;
    try {
      const st = statSync(path);
      const id = `${st.dev}:${st.ino}`;
      if (!seen.has(id)) seen.set(id, { path, id });
    } catch {}
  }
  return [...seen.values()];
}

/**
 * Runs `fn` with the calling thread inside the network namespace at `path`, and moves it back before returning.
 * Synchronous on purpose: setns moves this thread alone, and no other JavaScript may run while it is elsewhere (a
 * socket opened meanwhile would be born in that namespace). Moving back cannot fail short of the kernel refusing a
 * namespace this thread was just in; if it ever did, NetnsReturnError says so, and the process must be restarted.
 */
export function inNetworkNamespace<T>(libbpf: Libbpf, path: string, fn: () => T): T {
  const home = openSync("/proc/thread-self/ns/net", "r");
  try {
    const target = openSync(path, "r");
    try {
      if (libbpf.setns(target, CLONE_NEWNET) !== 0)
        throw new Error(`setns into ${path}: ${errnoText(libbpf.errno())}`);
    } finally {
      closeSync(target);
    }
    const outcome = attempt(fn);
    if (libbpf.setns(home, CLONE_NEWNET) !== 0)
      throw new NetnsReturnError(`back from ${path}: ${errnoText(libbpf.errno())}`);
    if (!outcome.ok) throw outcome.error;
    return outcome.value;
  } finally {
    closeSync(home);
  }
}

function attempt<T>(fn: () => T): { ok: true; value: T } | { ok: false; error: unknown } {
  try {
    return { ok: true, value: fn() };
  } catch (error) {
    return { ok: false, error };
  }
}

/** This thread stayed in another network namespace: nothing it opens from now on can be trusted. */
export class NetnsReturnError extends Error {
  constructor(what: string) {
    super(`cannot return to the proxy's own network namespace (${what})`);
    this.name = "NetnsReturnError";
  }
}
