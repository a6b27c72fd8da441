// Runs upstream's kube-controller-manager with nothing but the EndpointSlice controller, so every
// slice in the lab apiserver was written by the code we compare ourselves with.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, openSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const UPSTREAM_BIN = "/root/.cache/switchyard/v1.37.2/bin";
export const CONTROLLER_MANAGER = join(UPSTREAM_BIN, "kube-controller-manager");

export interface UpstreamSliceController {
  logPath: string;
  stop(): Promise<void>;
}

export function missingControllerManager(): string | undefined {
  return existsSync(CONTROLLER_MANAGER) ? undefined : `no ${CONTROLLER_MANAGER}`;
}

export function startEndpointSliceController(stateDir: string): UpstreamSliceController {
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
      // Each controller acts as its own ServiceAccount, with the RBAC role upstream ships for it.
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

export function tail(path: string, lines = 30): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}
