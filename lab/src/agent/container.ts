import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, rmSync } from "node:fs";
import { constants } from "node:os";
import type { Writable } from "node:stream";
import { formatTime } from "@switchyard/kube";
import type { ContainerState } from "kubernetes-types/core/v1.js";
import { ContainerInput, type InputSpec } from "./container-input.js";
import type { ContainerLog, OutputFiles } from "./container-log.js";
import { processStartTicks, readExitCode, shimArgv, shimChild } from "./container-shim.js";
import type { ContainerRecord } from "./runtime-record.js";

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
  /**
   * Runs each instance under a shim (container-shim.ts) and keeps the container's record (runtime-record.ts), so
   * that a restarted agent can adopt the running process; without it the process is the agent's own child.
   */
  runtime?: { exitFile: (instance: number) => string; save: (record: ContainerRecord) => void };
  /** Called whenever state, lastState or restartCount changes. */
  onChange: () => void;
  now?: () => Date;
}

/** Backoff before the n-th restart: 1 s doubling to 30 s (the kubelet's 10 s → 5 min, shortened for a lab). */
export function restartDelayMs(restarts: number): number {
  return Math.min(1000 * 2 ** restarts, 30_000);
}

/** The running instance's process and shim, each with its start time (processStartTicks), and its exit file. */
type ShimmedProcess = NonNullable<ContainerRecord["process"]>;

/** How often an adopted process's shim is looked at for its exit (it is not this agent's child). */
const ADOPTED_POLL_MS = 250;

/** A container's process: started, restarted after a crash with backoff, stopped with a grace period. */
export class Container {
  state: ContainerState = { waiting: { reason: "ContainerCreating" } };
  lastState: ContainerState = {};
  restartCount = 0;
  /** The running instance's stdin and terminal, for attach; undefined without spec stdin or tty, or when none runs. */
  input: ContainerInput | undefined;
  /** The process this agent spawned (the shim, with `runtime`); undefined for an adopted one. */
  private child: ChildProcess | undefined;
  /** The running instance under its shim, once found; set for adopted instances from their record. */
  private shimmed: ShimmedProcess | undefined;
  /** Resolves once the running instance's own pid is known (at once without a shim). */
  private located: Promise<void> = Promise.resolve();
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
    if (this.o.runtime) return this.shimmed?.pid;
    return this.child?.pid;
  }

  /** Starts an instance; resolves once its pid is known. */
  async start(): Promise<void> {
    if (this.stopping) return;
    this.startedAt = this.now().getTime();
    this.oomKillsAtStart = this.o.oomKills?.() ?? 0;
    if (!this.o.argv) {
      this.state = { running: { startedAt: formatTime(this.now().getTime()) } };
      this.changed();
      return;
    }
    const exitFile = this.o.runtime?.exitFile(this.restartCount);
    if (exitFile) rmSync(exitFile, { force: true });
    const [bin, ...args] = exitFile ? shimArgv(exitFile, this.o.argv) : this.o.argv;
    const out = openSync(this.o.output.stdout, "a");
    const err = openSync(this.o.output.stderr, "a");
    this.o.log?.begin(this.restartCount);
    let child: ChildProcess;
    try {
      const wanted = this.o.input;
      // Output goes to its files straight from the process (the relay's stdout, for a tty: a terminal's one stream).
      child = spawn(bin ?? "false", args, {
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
    this.changed();
    if (exitFile && child.pid) {
      this.located = this.locate(child, exitFile);
      await this.located;
    }
  }

  /** Finds the shim's child, the container's own process, and records it. */
  private async locate(child: ChildProcess, exitFile: string): Promise<void> {
    const shimPid = child.pid ?? 0;
    const shimStart = processStartTicks(shimPid) ?? 0;
    for (let waited = 0; waited < 5000 && this.child === child; waited += 2) {
      const pid = shimChild(shimPid);
      const pidStart = pid === undefined ? undefined : processStartTicks(pid);
      if (pid !== undefined && pidStart !== undefined) {
        this.shimmed = { pid, pidStart, shimPid, shimStart, exitFile };
        this.changed();
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 2));
    }
  }

  /**
   * Takes the container over from the node's previous agent, as its record (runtime-record.ts) left it: a running
   * instance is watched through its shim (an exit while no agent ran is found in the exit file), one in back-off
   * starts its next instance, one that ended for good stays ended.
   */
  adopt(record: ContainerRecord): void {
    this.restartCount = record.restartCount;
    this.lastState = record.lastState;
    this.oomKillsAtStart = record.oomKillsAtStart;
    const p = record.process;
    if (record.state.running && p) {
      this.state = record.state;
      this.startedAt = Date.parse(record.state.running.startedAt ?? "") || this.now().getTime();
      this.shimmed = p;
      this.o.log?.resume(this.restartCount);
      this.exited = this.watchAdopted(p);
      this.o.onChange();
      return;
    }
    if (record.state.terminated) {
      this.state = record.state;
      this.settle();
      this.o.onChange();
      return;
    }
    if (record.state.waiting?.reason === "CrashLoopBackOff") {
      this.state = record.state;
      this.o.onChange();
      this.backoff = setTimeout(() => {
        this.backoff = undefined;
        this.restartCount++;
        void this.start();
      }, restartDelayMs(0));
      return;
    }
    void this.start();
  }

  /** Resolves when the adopted instance has ended, having handled its exit as any exit. */
  private watchAdopted(p: ShimmedProcess): Promise<void> {
    return new Promise((resolve) => {
      const look = () => {
        if (this.shimmed !== p) return resolve();
        let code = readExitCode(p.exitFile);
        // The shim writes the code before it exits: read again once it is gone.
        if (code === undefined && processStartTicks(p.shimPid) !== p.shimStart)
          code = readExitCode(p.exitFile);
        if (code !== undefined) {
          this.onExit(code, null);
          return resolve();
        }
        if (processStartTicks(p.shimPid) !== p.shimStart) {
          // Killed with its process, or the node's processes removed: nothing says how it ended, and the kubelet
          // reports such a container so.
          this.onExit(137, null, "ContainerStatusUnknown");
          return resolve();
        }
        setTimeout(look, ADOPTED_POLL_MS);
      };
      look();
    });
  }

  private onExit(exitCode: number, signal: NodeJS.Signals | null, reason?: string): void {
    this.child = undefined;
    this.shimmed = undefined;
    this.input = undefined;
    this.o.log?.end();
    // As containerd's CRI does: an OOM kill in the container's cgroup while it ran names its end, whatever the code.
    const oomKilled = (this.o.oomKills?.() ?? 0) > this.oomKillsAtStart;
    const terminated = {
      exitCode,
      reason: reason ?? (oomKilled ? "OOMKilled" : exitCode === 0 ? "Completed" : "Error"),
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
        void this.start();
      }, delay);
    } else this.settle();
    this.changed();
  }

  /** The record saved (with a runtime), then the owner told. */
  private changed(): void {
    this.save();
    this.o.onChange();
  }

  private save(): void {
    this.o.runtime?.save({
      state: this.state,
      lastState: this.lastState,
      restartCount: this.restartCount,
      ...(this.shimmed ? { process: this.shimmed } : {}),
      oomKillsAtStart: this.oomKillsAtStart,
    });
  }

  private get alive(): boolean {
    return this.child !== undefined || this.shimmed !== undefined;
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves when the process is gone. */
  async stop(graceMs: number): Promise<void> {
    this.stopping = true;
    if (this.backoff) clearTimeout(this.backoff);
    if (!this.alive) {
      if (this.state.running) this.state = { terminated: { exitCode: 0, reason: "Completed" } };
      this.save();
      this.settle();
      return;
    }
    await this.end(graceMs);
  }

  /**
   * Ends the running instance as a failed probe does (SIGTERM, SIGKILL after `graceMs`); its exit then goes as any
   * exit does, restarted or not by the restart policy.
   */
  async kill(graceMs: number): Promise<void> {
    if (this.alive) await this.end(graceMs);
  }

  /** Signals the container's own process: the shim's child, checked to be the same process still. */
  private signal(sig: NodeJS.Signals): void {
    const p = this.shimmed;
    if (p) {
      try {
        if (processStartTicks(p.pid) === p.pidStart) process.kill(p.pid, sig);
      } catch {} // ended meanwhile: its shim writes the exit
      return;
    }
    this.child?.kill(sig);
  }

  private async end(graceMs: number): Promise<void> {
    await this.located;
    this.signal("SIGTERM");
    let timer: NodeJS.Timeout | undefined;
    const killed = new Promise<void>((resolve) => {
      timer = setTimeout(() => {
        this.signal("SIGKILL");
        resolve();
      }, graceMs);
    });
    await Promise.race([this.exited, killed]);
    clearTimeout(timer);
    await this.exited;
  }
}
