import { accessSync, constants, statSync } from "node:fs";
import { dirname, join } from "node:path";

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

/**
 * The folders above `paths` that a process of another user may not pass (no search bit for others): the host's
 * /root, 0700, holds the project's node and upstream's binaries, which non-root containers run here.
 */
export function closedFolders(paths: readonly string[]): string[] {
  const closed = new Set<string>();
  for (const path of paths) {
    for (let dir = dirname(path); dir !== dirname(dir); dir = dirname(dir)) {
      try {
        if ((statSync(dir).mode & 0o001) === 0) closed.add(dir);
      } catch {}
    }
  }
  return [...closed].sort();
}
