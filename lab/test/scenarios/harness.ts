// Running a scenario inside a test: its report printed as TAP comments, and a claim's finding looked up.
import assert from "node:assert/strict";
import { realExec } from "../../src/exec.js";
import { formatScenarioReport } from "../../src/scenarios/kit/report.js";
import type {
  ClaimFinding,
  Scenario,
  ScenarioContext,
  ScenarioReport,
} from "../../src/scenarios/kit/scenario.js";

/** Runs a scenario on the lab in stateDir (a kind lab's needs `kind`, as the command line passes it). */
export async function runScenario(
  stateDir: string,
  scenario: Scenario,
  params: Record<string, string>,
  kind?: ScenarioContext["kind"],
): Promise<ScenarioReport> {
  const report = await scenario.run({
    stateDir,
    params: new Map(Object.entries(params)),
    out: { write: () => {} },
    exec: realExec,
    ...(kind ? { kind } : {}),
  });
  console.log(formatScenarioReport(report).replace(/^/gm, "# "));
  return report;
}

export function finding(report: ScenarioReport, claim: string): ClaimFinding {
  const f = report.findings.find((x) => x.claim === claim);
  assert.ok(f, `a finding for ${claim}`);
  return f;
}
