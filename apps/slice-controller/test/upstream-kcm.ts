// Upstream's kube-controller-manager running nothing but its EndpointSlice controller, for suites that
// run this program next to it on one apiserver (packages/slice-controller/test/upstream has the same
// for the library's diff test; a test cannot import across workspaces' roots).
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";

const CONTROLLER_MANAGER = join(homedir(), ".cache/switchyard/v1.37.2/bin/kube-controller-manager");

export function missingControllerManager(): string | undefined {
  return existsSync(CONTROLLER_MANAGER) ? undefined : `no ${CONTROLLER_MANAGER}`;
}

export interface UpstreamSliceController {
  logPath: string;
  stop(): Promise<void>;
}

/** Starts it against the control plane in `stateDir` (its controller-manager.kubeconfig). */
export function startUpstreamSliceController(stateDir: string): UpstreamSliceController {
  const kubeconfig = join(stateDir, "controller-manager.kubeconfig");
  const logPath = join(stateDir, "logs", "kcm-endpointslice.log");
  const log = openSync(logPath, "a");
  const child: ChildProcess = spawn(
    CONTROLLER_MANAGER,
    [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      "--controllers=endpointslice-controller",
      "--use-service-account-credentials=true",
      "--leader-elect=false",
      "--bind-address=127.0.0.1",
      "--secure-port=0",
      "--profiling=false",
      "--v=2",
    ],
    { stdio: ["ignore", log, log] },
  );
  return {
    logPath,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

export function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}
