import { claims } from "./claims.js";
import type { ScenarioReport } from "./scenario.js";

/** The report as printed: the measurements, then one block per claim: what it says, what we measured, the verdict. */
export function formatScenarioReport(r: ScenarioReport): string {
  const out = [`scenario ${r.scenario}`, ...r.lines.map((l) => `  ${l}`), ""];
  for (const f of r.findings) {
    out.push(`${f.claim} claim:    ${claims[f.claim] ?? "(not in docs/claims.md)"}`);
    out.push(`${" ".repeat(f.claim.length)} measured: ${f.measured}`);
    out.push(`${" ".repeat(f.claim.length)} verdict:  ${f.verdict}${f.note ? ` (${f.note})` : ""}`);
  }
  return out.join("\n");
}
