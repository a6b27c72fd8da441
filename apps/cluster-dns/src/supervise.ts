import cluster, { type Worker } from "node:cluster";
import { rmSync } from "node:fs";
// The workers entry only: the primary serves no DNS, so it does not load the resolver.
import { serveScrapes } from "@switchyard/resolver/workers";
import type { Flags } from "./flags.js";
import { writePidfile } from "./pidfile.js";

/** The environment variable that tells a forked worker its number. */
export const WORKER_ENV = "SWITCHYARD_DNS_WORKER";

/** A worker's message to the primary: the lines of the error it is about to exit with. */
interface FatalMessage {
  type: "switchyard-dns:fatal";
  lines: string[];
}

function isFatal(message: unknown): message is FatalMessage {
  return (message as FatalMessage | null)?.type === "switchyard-dns:fatal";
}

/** In a worker: hands its startup error to the primary, then calls `done` (sent or not). */
export function reportFatal(lines: string[], done: () => void): void {
  const message: FatalMessage = { type: "switchyard-dns:fatal", lines };
  if (process.send) process.send(message, undefined, {}, () => done());
  else done();
}

/** Where the primary writes: its own log lines, and a worker's fatal error. */
export interface SuperviseOutput {
  log: (line: string) => void;
  fatal: (line: string) => void;
}

/**
 * `-workers N` in the primary process: forks N copies of this command, which share the DNS, health,
 * ready and metrics sockets (node:cluster hands each worker the primary's listening handles; the kernel
 * spreads UDP datagrams over the workers, the primary deals out TCP connections). The primary serves
 * nothing itself. It passes signals on, sums metrics for scrapes, and ends when the workers have: if one
 * dies on its own, it stops the others and exits with that worker's code.
 */
export function supervise(flags: Flags, { log, fatal }: SuperviseOutput): void {
  const workers = new Set<Worker>();
  /** Workers that said why they are exiting: their exit is not logged again. */
  const explained = new Set<Worker>();
  let stopping = false;
  let exitCode = 0;
  const stopAll = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const w of workers) w.process.kill(signal);
  };
  for (let index = 1; index <= flags.workers; index++) {
    const worker = cluster.fork({ [WORKER_ENV]: String(index) });
    serveScrapes(worker, () => [...workers]);
    // Every worker fails the same way on a port that is taken: the first one's error is printed, once.
    worker.on("message", (message: unknown) => {
      if (!isFatal(message)) return;
      if (explained.size === 0) for (const line of message.lines) fatal(line);
      explained.add(worker);
    });
    workers.add(worker);
  }
  if (flags.pidfile) writePidfile(flags.pidfile, log);
  cluster.on("exit", (worker, code, signal) => {
    workers.delete(worker);
    // A worker still starting when the stop came has no handler yet: the signal itself ends it (code null),
    // which is the stop asked for, not a failure.
    const failed = (code !== null && code !== 0) || (signal !== null && !stopping);
    if (failed && exitCode === 0) exitCode = code || 1;
    if (!stopping) {
      if (!explained.has(worker))
        log(`[ERROR] worker ${worker.process.pid} exited (${signal ?? `code ${code}`}); stopping the others`);
      stopAll("SIGTERM");
    }
    if (workers.size > 0) return;
    if (flags.pidfile) rmSync(flags.pidfile, { force: true });
    process.exit(exitCode);
  });
  process.on("SIGTERM", () => stopAll("SIGTERM"));
  process.on("SIGINT", () => stopAll("SIGINT"));
  process.on("SIGUSR1", () => {
    for (const w of workers) w.process.kill("SIGUSR1");
  });
}
