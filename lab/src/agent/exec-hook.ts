import { spawn } from "node:child_process";
import { containerEnvironment, nsenterArgv } from "./kubelet-api/exec-in-container.js";

/**
 * A command run inside a running container, as the kubelet runs an exec probe or an exec lifecycle hook: in the
 * container's root, hostname and network (nsenter by the container's pid) with the environment it started with.
 * Resolves with the exit code, or undefined when it could not run or outlived `timeoutMs` (then it is killed).
 */
export function execInContainerFor(
  pid: number,
  command: readonly string[],
  timeoutMs: number,
): Promise<number | undefined> {
  return new Promise((resolve) => {
    let env: Record<string, string>;
    try {
      env = containerEnvironment(pid);
    } catch {
      resolve(undefined);
      return;
    }
    const [bin = "nsenter", ...args] = nsenterArgv(pid, command);
    const child = spawn(bin, args, { env, stdio: "ignore" });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.on("error", () => {
      clearTimeout(timer);
      resolve(undefined);
    });
    child.on("exit", (code) => {
      clearTimeout(timer);
      resolve(code ?? undefined);
    });
  });
}
