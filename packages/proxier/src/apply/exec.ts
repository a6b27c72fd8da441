// The one seam through which the proxier runs programs (nft, iptables-restore, conntrack).
// Appliers take an Exec so tests can script the kernel's answers and kernel tests can point
// the same code into a network namespace.
import { type ChildProcess, spawn } from "node:child_process";
import { formatGoDuration } from "@switchyard/basics";
import { type Clock, realClock } from "@switchyard/kube";

export interface ExecResult {
  /** Exit status; a process killed by a signal reports 128 + the signal number, like a shell. */
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

export interface ExecOptions {
  /** Written to the program's stdin, which is then closed; pieces are written in order. */
  readonly stdin?: string | readonly (string | Uint8Array)[];
}

/** What a program's stdin receives, as one string (for fakes and logs). */
export function stdinText(stdin: ExecOptions["stdin"]): string {
  if (typeof stdin === "string") return stdin;
  return (stdin ?? []).map((p) => (typeof p === "string" ? p : Buffer.from(p).toString("utf8"))).join("");
}

/**
 * Runs a program to completion. Rejects when it cannot be started at all (CommandNotFoundError) and when it runs past
 * its time limit (ExecTimeoutError); any exit status is a result.
 */
export type Exec = (command: string, args: readonly string[], options?: ExecOptions) => Promise<ExecResult>;

/** The program is not installed (or not on PATH); callers turn this into a one-line message. */
export class CommandNotFoundError extends Error {
  readonly command: string;
  constructor(command: string) {
    super(`${command}: command not found (is it installed and on PATH?)`);
    this.command = command;
  }
}

/**
 * A program that ran past its time limit and was killed. A sync that meets one fails, so the proxier's next sync is a
 * full one, as after any failed sync.
 */
export class ExecTimeoutError extends Error {
  readonly command: string;
  readonly timeoutMs: number;
  constructor(command: string, timeoutMs: number) {
    super(`${command}: still running after ${formatGoDuration(timeoutMs)}, killed (exec timeout)`);
    this.name = "ExecTimeoutError";
    this.command = command;
    this.timeoutMs = timeoutMs;
  }
}

/**
 * How long a kernel tool may run. Upstream has no such limit (only iptables' `-w 5` for the xtables lock, and 5
 * minutes for `iptables -C`): a hung `nft` or `iptables-restore` there stalls every later sync. A minute is three
 * times kube-proxy's own full nftables sync of 10k Services on this project's bench machine (18 s), and still bounds
 * a hang to one failed sync.
 */
export const DEFAULT_EXEC_TIMEOUT_MS = 60_000;

export interface RealExecOptions {
  /** The time limit of each run; DEFAULT_EXEC_TIMEOUT_MS by default, 0 for none. */
  readonly timeoutMs?: number;
  /** Times the limit; @switchyard/kube's realClock by default. */
  readonly clock?: Clock;
}

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

const realExecs = new WeakSet<Exec>();

/** Whether `exec` runs programs on this host as they are (newRealExec), not a test's fake or a wrapper. */
export const isRealExec = (exec: Exec): boolean => realExecs.has(exec);

/**
 * Exec on the host, via child_process.spawn (no shell, so arguments need no quoting). A run past the time limit is
 * killed with SIGKILL, with everything it started (it runs in a process group of its own), and fails with one line
 * naming the program and the limit.
 */
export function newRealExec(options: RealExecOptions = {}): Exec {
  const timeoutMs = options.timeoutMs ?? DEFAULT_EXEC_TIMEOUT_MS;
  const clock = options.clock ?? realClock;
  const exec: Exec = (command, args, runOptions = {}) =>
    new Promise((resolve, reject) => {
      const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"], detached: true });
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clock.clearTimeout(timer);
        fn();
      };
      const timer =
        timeoutMs > 0
          ? clock.setTimeout(() => {
              killGroup(child);
              // Whatever the program started may hold its pipes open; the answer does not wait for them.
              child.stdout.destroy();
              child.stderr.destroy();
              settle(() => reject(new ExecTimeoutError(command, timeoutMs)));
            }, timeoutMs)
          : undefined;
      const out: Buffer[] = [];
      const err: Buffer[] = [];
      child.stdout.on("data", (b: Buffer) => out.push(b));
      child.stderr.on("data", (b: Buffer) => err.push(b));
      child.on("error", (e: NodeJS.ErrnoException) => {
        settle(() => reject(e.code === "ENOENT" ? new CommandNotFoundError(command) : e));
      });
      child.on("close", (code, signal) => {
        settle(() =>
          resolve({
            code: code ?? 128 + (SIGNAL_NUMBERS[signal ?? ""] ?? 0),
            stdout: Buffer.concat(out).toString("utf8"),
            stderr: Buffer.concat(err).toString("utf8"),
          }),
        );
      });
      // A program that exits without reading stdin makes the write fail with EPIPE; its exit
      // status already says what went wrong.
      child.stdin.on("error", () => {});
      const input = runOptions.stdin ?? "";
      if (typeof input === "string") child.stdin.end(input);
      else {
        for (const piece of input) child.stdin.write(piece);
        child.stdin.end();
      }
    });
  realExecs.add(exec);
  return exec;
}

function killGroup(child: ChildProcess): void {
  try {
    if (child.pid !== undefined) process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone, or never started.
    child.kill("SIGKILL");
  }
}

/** Exec on the host with the default time limit. */
export const realExec: Exec = newRealExec();

/** Runs every command inside the named network namespace (`ip netns exec`). */
export function inNetns(netns: string, exec: Exec): Exec {
  return async (command, args, options) => {
    let result: ExecResult;
    try {
      result = await exec("ip", ["netns", "exec", netns, command, ...args], options);
    } catch (err) {
      // The program that hung is the one run in the namespace, not `ip`.
      if (err instanceof ExecTimeoutError) throw new ExecTimeoutError(command, err.timeoutMs);
      throw err;
    }
    // ip netns exec reports a missing program itself, with execvp's message.
    if (result.code !== 0 && /exec of "[^"]*" failed: No such file or directory/.test(result.stderr)) {
      throw new CommandNotFoundError(command);
    }
    return result;
  };
}

/** The first non-empty line of a program's error output, for one-line error messages. */
export function firstLine(text: string): string {
  return (
    text
      .split("\n")
      .map((l) => l.trim())
      .find((l) => l !== "") ?? ""
  );
}
