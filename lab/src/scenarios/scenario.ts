import type { Exec } from "../netns/exec.js";
import type { ProgressSink } from "../progress.js";

/** What a measurement says about a claim of claims.md. */
export type Verdict = "holds" | "half right" | "wrong" | "not measured";

export interface ClaimFinding {
  /** The claim's id in shared/reference/claims.md: "C1". */
  claim: string;
  /** The number(s) measured, in words: "1 of 50 slices written after one pod was deleted". */
  measured: string;
  verdict: Verdict;
  /** Why the verdict, when the number alone does not say it. */
  note?: string;
}

export interface ScenarioReport {
  scenario: string;
  /** Lines of measurements (tables, per-node figures), printed before the claims. */
  lines: string[];
  findings: ClaimFinding[];
}

export interface ScenarioContext {
  /** The lab's state folder (a lab brought up with `switchyard-lab up`). */
  stateDir: string;
  /** `--set key=value` pairs from the command line, for sizes and timings (each scenario documents its own). */
  params: ReadonlyMap<string, string>;
  out: ProgressSink;
  exec: Exec;
  /** Only for a kind lab: the docker CLI that enters its nodes, and the load of the lab's images into them. */
  kind?: { docker: string; loadImages: () => Promise<void> };
}

export interface Scenario {
  name: string;
  /** One line for `switchyard-lab scenario --help`. */
  summary: string;
  /** The claims it measures. */
  claims: string[];
  run(ctx: ScenarioContext): Promise<ScenarioReport>;
}

/** A numeric `--set` parameter with its default; a bad value is a one-line error naming it. */
export function numberParam(ctx: ScenarioContext, name: string, fallback: number): number {
  const raw = ctx.params.get(name);
  if (raw === undefined) return fallback;
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0)
    throw new Error(`scenario: --set ${name}=${raw} is not a non-negative number`);
  return n;
}

/** A `--set` list parameter: "1000,5000" → ["1000", "5000"]; the default when unset. */
export function listParam(ctx: ScenarioContext, name: string, fallback: readonly string[]): string[] {
  const raw = ctx.params.get(name);
  if (raw === undefined) return [...fallback];
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new Error(`scenario: --set ${name}=${raw} is an empty list`);
  return items;
}

/** A `--set` string parameter with its default. */
export const stringParam = (ctx: ScenarioContext, name: string, fallback: string): string =>
  ctx.params.get(name) ?? fallback;
