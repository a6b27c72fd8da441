import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from "node:fs";
import { dirname } from "node:path";

interface LockHolder {
  pid: number;
  command: string;
}

/** Whether a process runs (also one of another user). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

function readHolder(path: string): LockHolder | undefined {
  try {
    return JSON.parse(readFileSync(path, "utf8")) as LockHolder;
  } catch {
    return undefined;
  }
}

/**
 * Runs `fn` while holding `<dir>.lock`, so two `up`/`down` runs never work on one lab at once (a `down`
 * that removed the state folder under a running `up` left namespaces nobody had recorded). The lock sits
 * beside the folder because `down` removes the folder. A lock whose process is gone is taken over.
 */
export async function withLabLock<T>(dir: string, command: string, fn: () => Promise<T>): Promise<T> {
  const path = `${dir.replace(/\/+$/, "")}.lock`;
  mkdirSync(dirname(path), { recursive: true });
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, "wx");
      writeSync(fd, JSON.stringify({ pid: process.pid, command } satisfies LockHolder));
      closeSync(fd);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const holder = readHolder(path);
      if (holder && holder.pid !== process.pid && alive(holder.pid)) {
        throw new Error(
          `another switchyard-lab ${holder.command} (pid ${holder.pid}) is working on ${dir}; wait for it to finish`,
        );
      }
      if (attempt > 0) throw new Error(`cannot take the lab lock ${path}`);
      rmSync(path, { force: true }); // left by a process that is gone
    }
  }
  try {
    return await fn();
  } finally {
    if (readHolder(path)?.pid === process.pid) rmSync(path, { force: true });
  }
}
