import type { SpecResult } from "./junit.js";

export interface RunSummary {
  /** Whose stack ran: switchyard or upstream. */
  stack: string;
  runtime: string;
  focus: string;
  skip: string;
  seconds: number;
  specs: SpecResult[];
}

const count = (specs: readonly SpecResult[], status: SpecResult["status"]) =>
  specs.filter((s) => s.status === status).length;

/** The table a run prints: counts, then one line per spec that ran (passed or failed), failures with their cause. */
export function runTable(run: RunSummary): string[] {
  const ran = run.specs.filter((s) => s.status !== "skipped");
  const lines = [
    `${run.stack} stack on ${run.runtime}: ${count(run.specs, "passed")} passed, ${count(run.specs, "failed")} failed, ${count(run.specs, "skipped")} skipped in ${Math.round(run.seconds)}s`,
    "",
  ];
  for (const s of ran.sort((a, b) => (a.name < b.name ? -1 : 1)))
    lines.push(
      `${s.status === "passed" ? "PASS" : "FAIL"}  ${s.name}${s.reason ? `\n      ${s.reason}` : ""}`,
    );
  return lines;
}

export interface Comparison {
  /** Passed with upstream's stack, not with ours: what the drop-in claim cannot have. */
  regressions: { name: string; reason: string }[];
  /** Failed with both: a limitation of the lab (or of both), listed with our failure's cause. */
  bothFail: { name: string; reason: string }[];
  /** Passed with ours, failed with upstream's. */
  onlyOurs: string[];
  /** Passed with both. */
  bothPass: number;
}

/** Spec by spec, ours against upstream's anchor; a spec that ran in only one of the two is left out. */
export function compareRuns(ours: RunSummary, upstream: RunSummary): Comparison {
  const theirs = new Map(upstream.specs.map((s) => [s.name, s]));
  const c: Comparison = { regressions: [], bothFail: [], onlyOurs: [], bothPass: 0 };
  for (const s of ours.specs) {
    const u = theirs.get(s.name);
    if (!u || s.status === "skipped" || u.status === "skipped") continue;
    if (s.status === "passed" && u.status === "passed") c.bothPass++;
    else if (s.status === "failed" && u.status === "passed")
      c.regressions.push({ name: s.name, reason: s.reason ?? "" });
    else if (s.status === "failed") c.bothFail.push({ name: s.name, reason: s.reason ?? "" });
    else c.onlyOurs.push(s.name);
  }
  return c;
}

export function comparisonLines(c: Comparison): string[] {
  return [
    `both pass: ${c.bothPass}; ours fails where upstream's passes: ${c.regressions.length}; both fail: ${c.bothFail.length}; only ours passes: ${c.onlyOurs.length}`,
    ...(c.regressions.length
      ? ["", "OURS FAILS, UPSTREAM PASSES:", ...c.regressions.map((r) => `  ${r.name}\n      ${r.reason}`)]
      : []),
    ...(c.bothFail.length
      ? ["", "both fail (the lab's limits):", ...c.bothFail.map((r) => `  ${r.name}\n      ${r.reason}`)]
      : []),
    ...(c.onlyOurs.length ? ["", "only ours passes:", ...c.onlyOurs.map((n) => `  ${n}`)] : []),
  ];
}
