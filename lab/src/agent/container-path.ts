import { accessSync, constants } from "node:fs";
import { join } from "node:path";

/** The PATH a container gets (the kubelet's default, which images' ENV PATH also is): its folders in order. */
export const containerPathDirs = [
  "/usr/local/sbin",
  "/usr/local/bin",
  "/usr/sbin",
  "/usr/bin",
  "/sbin",
  "/bin",
];

/**
 * Where a container whose root shows the host's files finds a program of the host's: the first executable of
 * that name in containerPathDirs, or undefined. (The agent's own PATH does not matter: the container's does.)
 */
export function hostProgramInContainerPath(name: string): string | undefined {
  for (const dir of containerPathDirs) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {}
  }
  return undefined;
}
