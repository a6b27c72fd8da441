// The two controllers under test, started against a lab control plane. Upstream's is the real
// kube-controller-manager running only the EndpointSlice controller, started exactly as the
// upstream comparison tests start it; ours is the slice-controller program.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { openSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startUpstreamSliceController, stopChild } from "@switchyard/testbed";
import { freePort } from "@switchyard/testbed/controlplane";

/**
 * "upstream-unthrottled" is the same kube-controller-manager with its client's rate limit (default
 * 20 qps, burst 30) lifted, to tell the controller's own speed from its client's throttle.
 */
export type ControllerKind = "ours" | "upstream" | "upstream-unthrottled";

export interface RunningController {
  kind: ControllerKind;
  pid: number;
  logPath: string;
  /** Syncs refused so far because the slice cache was older than the controller's own writes. */
  staleSyncs(): Promise<number>;
  stop(): Promise<void>;
}

const CLK_TCK = (() => {
  try {
    return Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;
  } catch {
    return 100;
  }
})();

/** User + system CPU time the process has used, in seconds, from /proc/<pid>/stat. */
export function cpuSeconds(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name (which may contain spaces) start at field 3; utime and stime are 14 and 15.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

/** kube-controller-manager at --v=2 logs every retried sync; a stale cache has its own message. */
function staleFromLog(logPath: string): Promise<number> {
  const text = readFileSync(logPath, "utf8");
  return Promise.resolve(text.split("EndpointSlice informer cache is out of date").length - 1);
}

/** VmHWM and VmRSS of a process, in KiB, from /proc/<pid>/status. */
export function memoryKiB(pid: number): { hwm: number; rss: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN);
  return { hwm: field("VmHWM"), rss: field("VmRSS") };
}

/** The pid of the process whose command line contains every one of `parts` (the helper hides it). */
function findPid(parts: readonly string[]): number | undefined {
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, "utf8");
      if (parts.every((p) => cmdline.includes(p))) return Number(entry);
    } catch {
      // The process went away while we looked.
    }
  }
  return undefined;
}

async function startUpstream(stateDir: string): Promise<RunningController> {
  const kcm = startUpstreamSliceController(stateDir);
  const marker = `--kubeconfig=${join(stateDir, "controller-manager.kubeconfig")}`;
  let pid: number | undefined;
  for (let i = 0; i < 100 && pid === undefined; i++) {
    pid = findPid(["kube-controller-manager", marker]);
    if (pid === undefined) await new Promise((r) => setTimeout(r, 50));
  }
  if (pid === undefined) throw new Error(`kube-controller-manager did not start; see ${kcm.logPath}`);
  return {
    kind: "upstream",
    pid,
    logPath: kcm.logPath,
    staleSyncs: () => staleFromLog(kcm.logPath),
    stop: () => kcm.stop(),
  };
}

/** kube-controller-manager with the helper's flags plus a client rate limit high enough never to bind. */
async function startUpstreamUnthrottled(stateDir: string): Promise<RunningController> {
  const kcm = startUpstreamSliceController(stateDir, {
    extraArgs: ["--kube-api-qps=10000", "--kube-api-burst=10000"],
    logName: "kcm-endpointslice-unthrottled.log",
  });
  return stoppable("upstream-unthrottled", kcm.child, kcm.logPath, () => staleFromLog(kcm.logPath));
}

function stoppable(
  kind: ControllerKind,
  child: ChildProcess,
  logPath: string,
  staleSyncs: () => Promise<number>,
): RunningController {
  const pid = child.pid;
  if (pid === undefined) throw new Error(`could not start the ${kind} controller`);
  return {
    kind,
    pid,
    logPath,
    staleSyncs,
    stop: () => stopChild(child),
  };
}

async function startOurs(stateDir: string, kubeconfig: string): Promise<RunningController> {
  const logPath = join(stateDir, "logs", "switchyard-slice-controller.log");
  const log = openSync(logPath, "a");
  const port = await freePort();
  const child: ChildProcess = spawn(
    process.execPath,
    [
      "apps/slice-controller/bin/switchyard-slice-controller.js",
      `--kubeconfig=${kubeconfig}`,
      "--leader-elect=false",
      `--metrics-bind-address=127.0.0.1:${port}`,
    ],
    { stdio: ["ignore", log, log] },
  );
  // Our controller counts them in endpoint_slice_controller_syncs{result="stale"}.
  const staleSyncs = async () => {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return Number(/^endpoint_slice_controller_syncs\{result="stale"\} (\S+)$/m.exec(text)?.[1] ?? 0);
  };
  return stoppable("ours", child, logPath, staleSyncs);
}

export function startController(
  kind: ControllerKind,
  stateDir: string,
  adminKubeconfig: string,
): Promise<RunningController> {
  if (kind === "upstream") return startUpstream(stateDir);
  if (kind === "upstream-unthrottled") return startUpstreamUnthrottled(stateDir);
  return startOurs(stateDir, adminKubeconfig);
}
