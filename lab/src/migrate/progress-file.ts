import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { TrafficDelta } from "./report.js";

export type MigrationPhase = "starting" | "preparing" | "switching" | "done" | "failed";
export type MigrationNodeState = "pending" | "switching" | "settling" | "switched" | "skipped";

export interface MigrationNodeProgress {
  name: string;
  state: MigrationNodeState;
  from?: string;
  switchSeconds?: number;
  leftovers?: number;
  /** Per client node: its traffic generator's counts while this node switched (once it has). */
  traffic?: Record<string, TrafficDelta>;
}

/**
 * What a running `migrate` has done so far, rewritten at every step into the lab's state folder so that others
 * (the dashboard) can follow it; the last one stays after it ends.
 */
export interface MigrationProgress {
  to: string;
  /** The migrate process, to tell a run that died from one still going. */
  pid: number;
  startedAt: string;
  updatedAt: string;
  phase: MigrationPhase;
  /** Why it failed, for phase "failed". */
  error?: string;
  nodes: MigrationNodeProgress[];
}

export const migrationProgressPath = (stateDir: string) => join(stateDir, "migration.json");

export function readMigrationProgress(stateDir: string): MigrationProgress | undefined {
  const file = migrationProgressPath(stateDir);
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8")) as MigrationProgress;
  } catch {
    // Renamed into place whole, so this is a file someone else wrote: nothing to follow.
    return undefined;
  }
}

/** Keeps the progress file current; each write replaces it whole (a reader never sees half a file). */
export class MigrationProgressFile {
  private progress: MigrationProgress;

  constructor(
    private readonly file: string,
    to: string,
    nodes: readonly string[],
    private readonly now: () => Date = () => new Date(),
  ) {
    const at = this.now().toISOString();
    this.progress = {
      to,
      pid: process.pid,
      startedAt: at,
      updatedAt: at,
      phase: "starting",
      nodes: nodes.map((name) => ({ name, state: "pending" })),
    };
    this.write();
  }

  phase(phase: MigrationPhase, error?: string): void {
    this.progress = { ...this.progress, phase, ...(error ? { error } : {}) };
    this.write();
  }

  node(name: string, change: Partial<Omit<MigrationNodeProgress, "name">>): void {
    this.progress = {
      ...this.progress,
      nodes: this.progress.nodes.map((n) => (n.name === name ? { ...n, ...change } : n)),
    };
    this.write();
  }

  private write(): void {
    this.progress.updatedAt = this.now().toISOString();
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.${process.pid}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.progress, null, 2)}\n`);
    renameSync(tmp, this.file);
  }
}
