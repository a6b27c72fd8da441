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

/**
 * The process is alive and is still the one we started (pids are reused): its command line matches. A process
 * on its way out still counts until its last thread is gone, because its listening sockets stay bound till then.
 */
export function isOurs(record: ProcessRecord): boolean {
  const stat = readProc(`/proc/${record.pid}/stat`);
  const cmdline = readProc(`/proc/${record.pid}/cmdline`);
  if (stat === undefined || cmdline === undefined) return false;
  return judgeProcess({ stat, cmdline, threads: threadCount(record.pid) }, record.args);
}

/** What /proc shows of one pid: its stat line, its cmdline (NUL-separated) and how many threads it has. */
export interface ProcView {
  stat: string;
  cmdline: string;
  threads: number;
}

const PF_KTHREAD = 0x00200000;

/** Whether a pid's /proc view is a live process started with `args`; pure, so the exit windows can be tested. */
export function judgeProcess(view: ProcView, args: string[]): boolean {
  // The fields after the command's name, which may hold spaces and parentheses: state is the first, flags the 7th.
  const fields = view.stat.slice(view.stat.lastIndexOf(")") + 2).split(" ");
  const state = fields[0] ?? "";
  // A zombie has exited; only its parent's wait() is missing. But a multi-threaded (Go) process shows its
  // leader as a zombie while other threads are still tearing down: it only counts as dead once no thread but
  // the leader is left.
  if (state.startsWith("Z")) return view.threads > 1;
  const cmdline = view.cmdline.split("\0").filter(Boolean);
  // Between releasing its memory and becoming a zombie, an exiting process reads back an empty command line.
  // Taking that for "gone" let a restart find the same process alive a moment later (a zombie with threads) and
  // skip the start. A kernel thread has no command line either, and is never ours.
  if (cmdline.length === 0) return (Number(fields[6]) & PF_KTHREAD) === 0;
  return cmdline.length > 1 && cmdline.slice(1).join("\0") === args.join("\0");
}

function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return undefined;
  }
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
