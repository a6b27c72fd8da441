// Writing the lab's state files (state JSON, kubeconfigs, certificates) so that a reader finds the old content or
// the new, never part of one: a full disk must not leave a truncated kubeconfig or a state file that no longer
// parses (`down` could then not find the processes to stop).
import { renameSync, rmSync, writeFileSync } from "node:fs";

/** Where a file is written before it is renamed over `path`: beside it, so the rename stays on one filesystem. */
export function temporaryPath(path: string): string {
  return `${path}.${process.pid}.tmp`;
}

/** An error naming the file and saying why in words: `cannot write /x/ca.key: no space left on device`. */
export function cannotWrite(path: string, err: unknown): Error {
  const e = err as NodeJS.ErrnoException;
  // Node's message is "ENOSPC: no space left on device, write": the code and the system call say nothing more.
  const why = e.code ? e.message.replace(/^[A-Z]+: /, "").replace(/, \w+(?: '.*')?$/, "") : String(err);
  return new Error(`cannot write ${path}: ${why}`, { cause: err });
}

/** Writes a temporary file and renames it over `path`; on failure the temporary file is removed. */
export function writeFileAtomic(
  path: string,
  data: string | Uint8Array,
  options: { mode?: number } = {},
): void {
  const temporary = temporaryPath(path);
  try {
    writeFileSync(temporary, data, options);
    renameSync(temporary, path);
  } catch (err) {
    rmSync(temporary, { force: true });
    throw cannotWrite(path, err);
  }
}
