// Upstream's kube-controller-manager running nothing but its EndpointSlice controller, against a test control
// plane: what the slice controller's comparison tests and benchmark measure ours against.
import { type ChildProcess, spawn } from "node:child_process";
import { openSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { resolveBinary } from "../upstream/binaries.js";

export interface UpstreamSliceController {
  logPath: string;
  stop(): Promise<void>;
}

/** The kube-controller-manager binary (found the way every lab command finds it), or undefined. */
export function controllerManagerBinary(): string | undefined {
  return resolveBinary("kube-controller-manager").path;
}

/** A skip reason when kube-controller-manager is not built, else undefined. */
export function missingControllerManager(): string | undefined {
  return controllerManagerBinary()
    ? undefined
    : "kube-controller-manager is not built (switchyard-lab upstream build)";
}

/**
 * Starts it against the control plane in `stateDir` (its controller-manager.kubeconfig), logging at --v=2 to
 * `<stateDir>/logs/<logName>`; `extraArgs` come last (a client rate limit, for instance).
 */
export function startUpstreamSliceController(
  stateDir: string,
  options: { extraArgs?: readonly string[]; logName?: string } = {},
): UpstreamSliceController & { child: ChildProcess } {
  const bin = controllerManagerBinary();
  if (!bin) throw new Error(missingControllerManager());
  const kubeconfig = join(stateDir, "controller-manager.kubeconfig");
  const logPath = join(stateDir, "logs", options.logName ?? "kcm-endpointslice.log");
  const log = openSync(logPath, "a");
  const child = spawn(
    bin,
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
      ...(options.extraArgs ?? []),
    ],
    { stdio: ["ignore", log, log] },
  );
  return {
    child,
    logPath,
    stop: () => stopChild(child),
  };
}

/** SIGTERM, then SIGKILL after 5 s; resolves once the process has exited. */
export async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(timer);
}

/** The last lines of a log, for a failure message; "" when it cannot be read. */
export function logTail(path: string, lines = 30): string {
  try {
    return readFileSync(path, "utf8").split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}
