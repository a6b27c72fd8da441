import { spawn } from "node:child_process";
import { closeSync, existsSync, openSync, readdirSync, readFileSync } from "node:fs";
import { realClock, sleep } from "@switchyard/kube";

export interface ProcessRecord {
  name: string;
  pid: number;
  bin: string;
  args: string[];
  log: string;
}

/**
 * Starts a component in its own session with output to a log file, so it outlives the CLI that started it
 * (`controlplane up` returns) and a terminal's Ctrl-C does not reach it.
 */
export function startDetached(
  name: string,
  bin: string,
  args: string[],
  log: string,
  detached = true,
): ProcessRecord {
  const fd = openSync(log, "a");
  try {
    const child = spawn(bin, args, { detached, stdio: ["ignore", fd, fd] });
    if (child.pid === undefined) throw new Error(`${name}: could not start ${bin}`);
    // A spawn failure (ENOENT, EACCES) arrives as an event; it is reported through the exit check instead.
    child.on("error", () => {});
    if (detached) child.unref();
    return { name, pid: child.pid, bin, args, log };
  } finally {
    closeSync(fd);
  }
}

/** The process is alive and is still the one we started (pids are reused): its command line matches. */
export function isOurs(record: ProcessRecord): boolean {
  const path = `/proc/${record.pid}/cmdline`;
  if (!existsSync(path)) return false;
  let cmdline: string[];
  try {
    cmdline = readFileSync(path, "utf8").split("\0").filter(Boolean);
  } catch {
    return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${record.pid}/stat`, "utf8");
  } catch {
    return false;
  }
  // A zombie has exited; only its parent's wait() is missing. But a multi-threaded (Go) process shows its
  // leader as a zombie while other threads are still tearing down, and its sockets stay bound until the last
  // one is gone: it only counts as dead once no thread but the leader is left. The state follows the last ")".
  if (stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z")) return threadCount(record.pid) > 1;
  return cmdline.length > 1 && cmdline.slice(1).join("\0") === record.args.join("\0");
}

/** SIGTERM, wait up to graceMs, then SIGKILL; resolves once the process is gone. */
export async function stopProcess(
  record: ProcessRecord,
  graceMs = 10_000,
): Promise<"stopped" | "killed" | "not-running"> {
  if (!isOurs(record)) return "not-running";
  try {
    process.kill(record.pid, "SIGTERM");
  } catch {
    return "not-running";
  }
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline) {
    if (!isOurs(record)) return "stopped";
    await sleep(realClock, 50);
  }
  try {
    process.kill(record.pid, "SIGKILL");
  } catch {}
  while (isOurs(record)) await sleep(realClock, 50);
  return "killed";
}

export function lastLines(path: string, n = 20): string {
  if (!existsSync(path)) return "(no log)";
  const lines = readFileSync(path, "utf8").trimEnd().split("\n");
  return lines.slice(-n).join("\n");
}

/**
 * The last klog error or fatal line (E1129 ..., F1129 ...) of a log, or etcd's last error, fatal or panic JSON line
 * as "msg: error", to say in one line why a component died.
 */
export function lastErrorLine(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  const lines = readFileSync(path, "utf8").trimEnd().split("\n");
  const line = lines
    .reverse()
    .find((l) => /^[EF]\d{4} /.test(l) || /^\{"level":"(error|fatal|panic)"/.test(l));
  if (line?.startsWith("{")) return zapMessage(line);
  return line?.replace(/^[EF]\d{4} [\d:.]+\s+\d+ [\w.]+:\d+\] /, "");
}

function zapMessage(line: string): string {
  try {
    const entry = JSON.parse(line) as { msg?: string; error?: string };
    return entry.error ? `${entry.msg}: ${entry.error}` : (entry.msg ?? line);
  } catch {
    return line;
  }
}

function threadCount(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/task`).length;
  } catch {
    return 0;
  }
}
