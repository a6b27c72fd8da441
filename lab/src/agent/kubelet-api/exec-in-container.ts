import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { constants } from "node:os";
import type { Writable } from "node:stream";
import { containerCgroupFiles, joinCgroupsArgv } from "../cgroup-join.js";
import { hostProgramInContainerPath } from "../container-path.js";
import { ptyRelayProgram } from "./pty-relay.js";
import type { TerminalSize } from "./resize.js";
import type { ExecRunner, StreamIO } from "./streams.js";

/**
 * The environment the container's process was started with, as a runtime gives it to every exec; read from
 * /proc so the agent's own environment never leaks in.
 */
export function containerEnvironment(pid: number): Record<string, string> {
  const raw = readFileSync(`/proc/${pid}/environ`, "utf8");
  const env: Record<string, string> = {};
  for (const entry of raw.split("\0")) {
    const eq = entry.indexOf("=");
    if (eq > 0) env[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return env;
}

/**
 * Joins the container's cgroups (cgroup-join.ts), its mount, UTS and network namespaces and execs the command
 * there (no --fork: none of them needs one, so the exit code is the command's), as the container's process is:
 * its user, groups, bounding set and no-new-privileges (execIdentity), as a runtime's exec takes them from the
 * container's spec. A command
 * that cannot be run gives a message on stderr and 127 (not found) or 126 (not executable), as a runtime's does.
 */
export function nsenterArgv(pid: number, command: readonly string[]): string[] {
  let identity: string[] = [];
  try {
    const setpriv = hostProgramInContainerPath("setpriv");
    if (setpriv) identity = [setpriv, ...execIdentity(readFileSync(`/proc/${pid}/status`, "utf8")), "--"];
  } catch {}
  const enter = [
    "nsenter",
    "--target",
    String(pid),
    "--mount",
    "--uts",
    "--net",
    "--",
    ...identity,
    ...command,
  ];
  return joinCgroupsArgv(containerCgroupFiles(pid), enter);
}

/** setpriv's options for a process like the one whose /proc/<pid>/status this is. */
export function execIdentity(status: string): string[] {
  const field = (name: string) => new RegExp(`^${name}:[ \\t]*(.*)$`, "m").exec(status)?.[1]?.trim() ?? "";
  const [uid = "0"] = field("Uid").split(/\s+/);
  const [gid = "0"] = field("Gid").split(/\s+/);
  const groups = field("Groups").split(/\s+/).filter(Boolean);
  const bounding = BigInt(`0x${field("CapBnd") || "0"}`);
  const caps: string[] = [];
  for (let n = 0; n < 64; n++) if ((bounding >> BigInt(n)) & 1n) caps.push(`,+cap_${n}`);
  return [
    `--bounding-set=-all${caps.join("")}`,
    "--inh-caps=-all",
    `--reuid=${uid}`,
    `--regid=${gid}`,
    groups.length ? `--groups=${groups.join(",")}` : "--clear-groups",
    ...(field("NoNewPrivs") === "1" ? ["--no-new-privs"] : []),
  ];
}

/** Runs `command` in the container whose process is `pid`, with the client's channels. */
export function execInContainer(pid: number): ExecRunner {
  return (command, io) => {
    if (command.length === 0) return Promise.reject(new Error("no command given to exec"));
    const env = containerEnvironment(pid);
    const child = io.tty ? spawnOnPty(nsenterArgv(pid, command), io, env) : spawnPiped(pid, command, io, env);
    return exitCodeOf(child, io.signal);
  };
}

function spawnPiped(pid: number, command: string[], io: StreamIO, env: Record<string, string>): ChildProcess {
  const [bin = "nsenter", ...args] = nsenterArgv(pid, command);
  const child = spawn(bin, args, {
    env,
    stdio: [io.stdin ? "pipe" : "ignore", io.stdout ? "pipe" : "ignore", io.stderr ? "pipe" : "ignore"],
  });
  feedStdin(child, io);
  relay(child.stdout, io.stdout);
  relay(child.stderr, io.stderr);
  return child;
}

/** Under the pty relay: stdout carries the terminal (stderr merged, as on a terminal), fd 3 the sizes. */
function spawnOnPty(argv: string[], io: StreamIO, env: Record<string, string>): ChildProcess {
  let initial: TerminalSize | undefined;
  let sizes: Writable | undefined;
  // onResize calls back at once with a size already received, so the relay can start with it; every later
  // size goes down fd 3 (spawn is synchronous, so none falls between the two).
  io.onResize((size) => {
    if (sizes) sizes.write(`${size.height} ${size.width}\n`);
    else initial = size;
  });
  const child = spawn(
    "python3",
    ["-c", ptyRelayProgram, String(initial?.height ?? 0), String(initial?.width ?? 0), ...argv],
    { env, stdio: [io.stdin ? "pipe" : "ignore", "pipe", "inherit", "pipe"] },
  );
  const pipe = child.stdio[3] as Writable;
  pipe.on("error", () => {});
  sizes = pipe;
  feedStdin(child, io);
  relay(child.stdout, io.stdout);
  return child;
}

function feedStdin(child: ChildProcess, io: StreamIO): void {
  if (!io.stdin || !child.stdin) return;
  // The command may exit without reading all its input; what is left is dropped, not an error.
  child.stdin.on("error", () => {});
  io.stdin.pipe(child.stdin);
}

/** The client's stream is left open: the remote-command session ends it after the exit status is known. */
function relay(from: NodeJS.ReadableStream | null, to: Writable | undefined): void {
  if (from && to) from.pipe(to, { end: false });
}

/** Resolves once the command exited and its output was read to the end; a client that left kills it. */
function exitCodeOf(child: ChildProcess, signal: AbortSignal): Promise<number> {
  const kill = () => child.kill("SIGKILL");
  signal.addEventListener("abort", kill, { once: true });
  return new Promise((resolve, reject) => {
    child.on("error", (err) => reject(new Error(`cannot start exec: ${err.message}`)));
    child.on("close", (code, killedBy) => {
      signal.removeEventListener("abort", kill);
      resolve(code ?? 128 + (killedBy ? constants.signals[killedBy] : 0));
    });
  });
}
