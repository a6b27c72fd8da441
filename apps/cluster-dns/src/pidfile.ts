import { writeFileSync } from "node:fs";

/**
 * `-pidfile`: writes the process id. A failure (a full disk, no permission) is logged as CoreDNS logs it, with Go's
 * wording of the error, and the server keeps running, as CoreDNS's does.
 */
export function writePidfile(path: string, log: (line: string) => void): void {
  try {
    writeFileSync(path, `${process.pid}\n`);
  } catch (err) {
    log(`[ERROR] Could not write pidfile: ${goPathError(path, err)}`);
  }
}

/** A Node file-system error as Go's *fs.PathError prints: "write /run/dns.pid: no space left on device". */
function goPathError(path: string, err: unknown): string {
  const e = err as NodeJS.ErrnoException;
  if (!e.code || !e.syscall) return String(err);
  // Node's message is "ENOSPC: no space left on device, write": the text between the code and the system call.
  const text = e.message.replace(/^[A-Z]+: /, "").replace(/, \w+(?: '.*')?$/, "");
  return `${e.syscall} ${path}: ${text}`;
}
