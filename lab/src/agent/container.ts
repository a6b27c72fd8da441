import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import { constants } from "node:os";
import type { Writable } from "node:stream";
import { formatTime } from "@switchyard/kube";
import type { ContainerState } from "kubernetes-types/core/v1.js";
import { ContainerInput, type InputSpec } from "./container-input.js";
import type { ContainerLog, OutputFiles } from "./container-log.js";

export type RestartPolicy = "Always" | "OnFailure" | "Never";

export interface ContainerOptions {
  name: string;
  /** The full command (sandboxArgv); undefined for the pause image, whose container is the sandbox itself. */
  argv: string[] | undefined;
  env: Record<string, string>;
  /** The files the process writes its stdout and stderr to, appended to across restarts. */
  output: OutputFiles;
  /** Keeps each instance's lines with their times for the kubelet API; without it only the output files are written. */
  log?: ContainerLog;
  restartPolicy: RestartPolicy;
  /** The spec's stdin and tty: a stdin pipe the agent keeps, and argv already on the pty relay (onPty) for a tty. */
  input?: InputSpec;
  /** The kernel's count of OOM kills in the container's memory cgroup (pod-cgroups.ts); none when absent. */
  oomKills?: () => number;
  /** Called whenever state, lastState or restartCount changes. */
  onChange: () => void;
  now?: () => Date;
}

/** Backoff before the n-th restart: 1 s doubling to 30 s (the kubelet's 10 s → 5 min, shortened for a lab). */
export function restartDelayMs(restarts: number): number {
  return Math.min(1000 * 2 ** restarts, 30_000);
}

/** A container's process: started, restarted after a crash with backoff, stopped with a grace period. */
export class Container {
  state: ContainerState = { waiting: { reason: "ContainerCreating" } };
  lastState: ContainerState = {};
  restartCount = 0;
  /** The running instance's stdin and terminal, for attach; undefined without spec stdin or tty, or when none runs. */
  input: ContainerInput | undefined;
  private child: ChildProcess | undefined;
  private exited: Promise<void> = Promise.resolve();
  private backoff: NodeJS.Timeout | undefined;
  private stopping = false;
  private startedAt = 0;
  private crashes = 0;
  /** oomKills() when the running instance started. */
  private oomKillsAtStart = 0;
  private readonly now: () => Date;
  private settle: () => void = () => {};
  /** Resolves once no process runs and none will: an exit its policy does not restart, or a stop. */
  readonly settled: Promise<void> = new Promise((resolve) => {
    this.settle = resolve;
  });

  constructor(private readonly o: ContainerOptions) {
    this.now = o.now ?? (() => new Date());
  }

  get running(): boolean {
    return this.state.running !== undefined;
  }

  /** When the current instance started, ms since the epoch (0 before the first). */
  get startedAtMs(): number {
    return this.startedAt;
  }

  /** The running process's pid (it holds the container's namespaces, for exec); undefined when none runs. */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  start(): void {
    if (this.stopping) return;
    this.startedAt = this.now().getTime();
    this.oomKillsAtStart = this.o.oomKills?.() ?? 0;
    if (!this.o.argv) {
      this.state = { running: { startedAt: formatTime(this.now().getTime()) } };
      this.o.onChange();
      return;
    }
    const [bin, ...args] = this.o.argv;
    const out = openSync(this.o.output.stdout, "a");
    const err = openSync(this.o.output.stderr, "a");
    this.o.log?.begin(this.restartCount);
    try {
      const wanted = this.o.input;
      // Output goes to its files straight from the process (the relay's stdout, for a tty: a terminal's one stream).
      const child = spawn(bin ?? "false", args, {
        env: this.o.env,
        stdio: [wanted?.stdin ? "pipe" : "ignore", out, err, ...(wanted?.tty ? (["pipe"] as const) : [])],
        detached: true,
      });
      this.child = child;
      if (wanted && (wanted.stdin || wanted.tty))
        this.input = new ContainerInput(
          child.stdin ?? undefined,
          child.stdio[3] as Writable | undefined,
          wanted,
        );
      this.exited = new Promise((resolve) => {
        child.on("error", () => {});
        child.on("exit", (code, signal) => {
          this.onExit(code ?? 128 + (signal ? constants.signals[signal] : 0), signal);
          resolve();
        });
      });
    } finally {
      closeSync(out);
      closeSync(err);
    }
    this.state = { running: { startedAt: formatTime(this.now().getTime()) } };
    this.o.onChange();
  }

  private onExit(exitCode: number, signal: NodeJS.Signals | null): void {
    this.child = undefined;
    this.input = undefined;
    this.o.log?.end();
    // As containerd's CRI does: an OOM kill in the container's cgroup while it ran names its end, whatever the code.
    const oomKilled = (this.o.oomKills?.() ?? 0) > this.oomKillsAtStart;
    const terminated = {
      exitCode,
      reason: oomKilled ? "OOMKilled" : exitCode === 0 ? "Completed" : "Error",
      ...(signal ? { signal: constants.signals[signal] } : {}),
      startedAt: this.state.running?.startedAt ?? formatTime(this.now().getTime()),
      finishedAt: formatTime(this.now().getTime()),
    };
    this.state = { terminated };
    const restart =
      !this.stopping &&
      (this.o.restartPolicy === "Always" || (this.o.restartPolicy === "OnFailure" && exitCode !== 0));
    if (restart) {
      // A container that ran for a minute starts its backoff over, as the kubelet forgets old crashes.
      if (this.now().getTime() - this.startedAt > 60_000) this.crashes = 0;
      this.lastState = { terminated };
      this.state = { waiting: { reason: "CrashLoopBackOff", message: `back-off restarting ${this.o.name}` } };
      const delay = restartDelayMs(this.crashes++);
      this.backoff = setTimeout(() => {
        this.backoff = undefined;
        this.restartCount++;
        this.start();
      }, delay);
    } else this.settle();
    this.o.onChange();
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.backoff) clearTimeout(this.backoff);
    const child = this.child;
    if (!child?.pid) {
      if (this.state.running) this.state = { terminated: { exitCode: 0, reason: "Completed" } };
      this.settle();
      return;
    }
    await this.end(child, graceMs);
  }

  /**
   * Ends the running instance as a failed probe does (SIGTERM, SIGKILL after `graceMs`); its exit then goes as any
   * exit does, restarted or not by the restart policy.
   */
  async kill(graceMs: number): Promise<void> {
    if (this.child?.pid) await this.end(this.child, graceMs);
  }

  private async end(child: ChildProcess, graceMs: number): Promise<void> {
    child.kill("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        child.kill("SIGKILL");
        resolve();
      }, graceMs);
    });
    await Promise.race([this.exited, killed]);
    clearTimeout(timer);
    await this.exited;
  }
}
