import type { ProgressSink } from "@switchyard/testbed/progress";
import type { Exec } from "../../exec.js";

/** What a measurement says about a claim of docs/claims.md. */
export type Verdict = "holds" | "half right" | "wrong" | "not measured";

export interface ClaimFinding {
  /** The claim's id in docs/claims.md: "C1". */
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
  kind?: { docker: string; loadImages: () => Promise<unknown> };
}

/**
 * A `--set key=value` parameter. The command line refuses keys a scenario does not declare, and help lists each
 * with its default, so the declaration is the one place a parameter is written down.
 */
export interface ScenarioParam {
  key: string;
  /** The value when --set does not give one; absent when it depends on the lab or other parameters. */
  default?: string;
  /** What the default is, in words, when it is not one fixed value. */
  defaultText?: string;
  /**
   * The claim's own size, used with `--full` where the default is cut to workshop size (a run of a few minutes);
   * absent when the default is the claim's size already.
   */
  full?: string;
  help: string;
}

export interface Scenario {
  name: string;
  /** One line for `switchyard-lab scenario --help`. */
  summary: string;
  /** The claims it measures. */
  claims: string[];
  /** Every `--set` key it reads. */
  params: readonly ScenarioParam[];
  run(ctx: ScenarioContext): Promise<ScenarioReport>;
}

/** A parameter's value: --set's, else its default, else `fallback` (for defaults computed from the lab). */
function rawParam(ctx: ScenarioContext, param: ScenarioParam, fallback?: string): string {
  const raw = ctx.params.get(param.key) ?? param.default ?? fallback;
  if (raw === undefined) throw new Error(`scenario: parameter ${param.key} has no default and was not --set`);
  return raw;
}

/** A numeric `--set` parameter; a bad value is a one-line error naming it. */
export function numberParam(ctx: ScenarioContext, param: ScenarioParam, fallback?: number): number {
  const raw = rawParam(ctx, param, fallback === undefined ? undefined : String(fallback));
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || raw.trim() === "")
    throw new Error(`scenario: --set ${param.key}=${raw} is not a non-negative number`);
  return n;
}

/** A `--set` list parameter: "1000,5000" → ["1000", "5000"]. */
export function listParam(ctx: ScenarioContext, param: ScenarioParam): string[] {
  const raw = rawParam(ctx, param);
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
  if (items.length === 0) throw new Error(`scenario: --set ${param.key}=${raw} is an empty list`);
  return items;
}

/** A `--set` string parameter. */
export const stringParam = (ctx: ScenarioContext, param: ScenarioParam, fallback?: string): string =>
  rawParam(ctx, param, fallback);
