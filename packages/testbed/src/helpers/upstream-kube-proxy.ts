// Upstream's kube-proxy in a network namespace: what the proxier's upstream diff and the proxier benchmark run
// ours against.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, openSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { resolveBinary } from "../upstream/binaries.js";

export interface KubeProxyRun {
  readonly process: ChildProcess;
  readonly logPath: string;
  stop(): Promise<void>;
}

/**
 * Starts kube-proxy (found the way every lab command finds it) inside network namespace `ns` with `args`, its
 * output in a fresh log file; `stop()` sends SIGTERM, then SIGKILL after 5 s.
 */
export function startKubeProxy(ns: string, args: readonly string[]): KubeProxyRun {
  const bin = resolveBinary("kube-proxy").path ?? "";
  const logPath = join(mkdtempSync(join(tmpdir(), "switchyard-kp-log-")), "kube-proxy.log");
  const fd = openSync(logPath, "w");
  const child = spawn("ip", ["netns", "exec", ns, bin, ...args], { stdio: ["ignore", fd, fd] });
  return {
    process: child,
    logPath,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await Promise.race([exited, sleep(5000)]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    },
  };
}
