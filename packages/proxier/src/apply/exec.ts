// The one seam through which the proxier runs programs (nft, iptables-restore, conntrack).
// Appliers take an Exec so tests can script the kernel's answers and kernel tests can point
// the same code into a network namespace.
import { spawn } from "node:child_process";

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

/** Runs a program to completion. Rejects only when it cannot be started at all. */
export type Exec = (command: string, args: readonly string[], options?: ExecOptions) => Promise<ExecResult>;

/** The program is not installed (or not on PATH); callers turn this into a one-line message. */
export class CommandNotFoundError extends Error {
  readonly command: string;
  constructor(command: string) {
    super(`${command}: command not found (is it installed and on PATH?)`);
    this.command = command;
  }
}

const SIGNAL_NUMBERS: Readonly<Record<string, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };

/** Exec on the host, via child_process.spawn (no shell, so arguments need no quoting). */
export const realExec: Exec = (command, args, options = {}) =>
  new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on("data", (b: Buffer) => out.push(b));
    child.stderr.on("data", (b: Buffer) => err.push(b));
    child.on("error", (e: NodeJS.ErrnoException) => {
      reject(e.code === "ENOENT" ? new CommandNotFoundError(command) : e);
    });
    child.on("close", (code, signal) => {
      resolve({
        code: code ?? 128 + (SIGNAL_NUMBERS[signal ?? ""] ?? 0),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
      });
    });
    // A program that exits without reading stdin makes the write fail with EPIPE; its exit
    // status already says what went wrong.
    child.stdin.on("error", () => {});
    const input = options.stdin ?? "";
    if (typeof input === "string") child.stdin.end(input);
    else {
      for (const piece of input) child.stdin.write(piece);
      child.stdin.end();
    }
  });

/** Runs every command inside the named network namespace (`ip netns exec`). */
export function inNetns(netns: string, exec: Exec): Exec {
  return async (command, args, options) => {
    const result = await exec("ip", ["netns", "exec", netns, command, ...args], options);
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
