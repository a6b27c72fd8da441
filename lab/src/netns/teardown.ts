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

/** Runs undos newest first; a namespace's processes are stopped before the namespace goes. */
export async function teardown(undos: readonly Undo[], deps: TeardownDeps): Promise<TeardownResult> {
  const result: TeardownResult = { undone: [], errors: [] };
  for (const undo of [...undos].reverse()) {
    try {
      if (undo.kind === "netns") {
        await stopNamespaceProcesses(undo.name, deps);
        await deps.exec(["ip", "netns", "del", undo.name]);
        result.undone.push(`netns ${undo.name}`);
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

async function stopNamespaceProcesses(name: string, deps: TeardownDeps): Promise<void> {
  let pids = await namespacePids(name, deps.exec);
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
    pids = await namespacePids(name, deps.exec);
  }
  if (pids.length === 0) return;
  signal("SIGKILL");
  while ((await namespacePids(name, deps.exec)).length > 0) await deps.sleep(50);
}
