import { realClock, sleep } from "@switchyard/kube";
import { type Exec, realExec } from "../exec.js";
import type { Undo } from "./steps.js";

export interface TeardownDeps {
  exec: Exec;
  kill: (pid: number, signal: NodeJS.Signals) => void;
  sleep: (ms: number) => Promise<void>;
  /** How long processes left in a namespace get between SIGTERM and SIGKILL. */
  graceMs: number;
}

export const realTeardownDeps: TeardownDeps = {
  exec: realExec,
  kill: (pid, signal) => process.kill(pid, signal),
  sleep: (ms) => sleep(realClock, ms),
  graceMs: 5000,
};

// What `ip` says when the object is already gone: the undo has nothing left to do.
const gone = /Cannot find device|No such file|No such process|does not exist|Cannot open network namespace/i;

export interface TeardownResult {
  undone: string[];
  errors: string[];
}

/** Runs undos newest first; a namespace's or a cgroup's processes are stopped before it goes. */
export async function teardown(undos: readonly Undo[], deps: TeardownDeps): Promise<TeardownResult> {
  const result: TeardownResult = { undone: [], errors: [] };
  // Every namespace's and cgroup's processes get SIGTERM together and share one grace period: a DNS pod's lameduck
  // (5 s, kubeadm's Corefile) is waited out once, not once per pod in turn; each undo then finds its own gone.
  await stopProcesses(() => pidsOfAll(undos, deps.exec), deps);
  for (const undo of [...undos].reverse()) {
    try {
      if (undo.kind === "netns") {
        await stopProcesses(() => namespacePids(undo.name, deps.exec), deps);
        await deps.exec(["ip", "netns", "del", undo.name]);
        result.undone.push(`netns ${undo.name}`);
      } else if (undo.kind === "cgroup") {
        await stopProcesses(() => cgroupPids(undo.path, deps.exec), deps);
        // The directories below it (pods', the node's system leaf) first: rmdir takes only an empty one.
        await deps.exec(["find", undo.path, "-depth", "-type", "d", "-exec", "rmdir", "{}", ";"]);
        result.undone.push(`cgroup ${undo.path}`);
      } else {
        await deps.exec(undo.argv);
        result.undone.push(undo.argv.join(" "));
      }
    } catch (err) {
      const message = (err as Error).message;
      if (!gone.test(message)) result.errors.push(message);
    }
  }
  return result;
}

/** The pids whose network namespace is this one (pods' processes, hostNetwork ones in a node's). */
export async function namespacePids(name: string, exec: Exec): Promise<number[]> {
  const out = await exec(["ip", "netns", "pids", name]);
  return out
    .split(/\s+/)
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 1);
}

/** The processes of every namespace and cgroup among the undos; one already gone has none. */
async function pidsOfAll(undos: readonly Undo[], exec: Exec): Promise<number[]> {
  const lists = await Promise.all(
    undos.map((undo) => {
      if (undo.kind === "netns") return namespacePids(undo.name, exec).catch(() => []);
      if (undo.kind === "cgroup") return cgroupPids(undo.path, exec).catch(() => []);
      return [];
    }),
  );
  return [...new Set(lists.flat())];
}

/** The pids in a cgroup directory and those below it (a node's: its agent and every process the agent started). */
async function cgroupPids(path: string, exec: Exec): Promise<number[]> {
  const out = await exec(["find", path, "-name", "cgroup.procs", "-exec", "cat", "{}", "+"]);
  return out.split(/\s+/).filter(Boolean).map(Number);
}

/** SIGTERM, up to the grace period, then SIGKILL until `list` finds none. */
async function stopProcesses(list: () => Promise<number[]>, deps: TeardownDeps): Promise<void> {
  let pids = await list();
  const signal = (sig: NodeJS.Signals) => {
    for (const pid of pids) {
      try {
        deps.kill(pid, sig);
      } catch {}
    }
  };
  signal("SIGTERM");
  for (let waited = 0; pids.length > 0 && waited < deps.graceMs; waited += 100) {
    await deps.sleep(100);
    pids = await list();
  }
  if (pids.length === 0) return;
  signal("SIGKILL");
  while ((await list()).length > 0) await deps.sleep(50);
}
