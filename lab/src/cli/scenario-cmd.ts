import { realExec } from "../netns/exec.js";
import { defaultLabDir, readLabRuntime } from "../netns/state.js";
import { scenarioByName, scenarios } from "../scenarios/index.js";
import { formatScenarioReport } from "../scenarios/report.js";
import { parseFlags, UsageError } from "./usage.js";

export const scenarioHelp = `switchyard-lab scenario <name> [--set key=value ...] [--state-dir DIR]

Runs a scenario against a running lab (switchyard-lab up) and prints what it measured next to the claims of
shared/reference/claims.md it tests. --set changes a scenario's sizes and timings (see docs/workshop).

${scenarios.map((s) => `  ${s.name.padEnd(14)} ${s.summary}${s.claims.length ? ` (${s.claims.join(", ")})` : ""}`).join("\n")}`;

export async function scenarioCommand(rest: string[]): Promise<number> {
  const { values, positionals } = parseFlags("scenario", rest, {
    set: { type: "string", multiple: true },
    "state-dir": { type: "string" },
  });
  const [name] = positionals;
  if (!name) throw new UsageError(`scenario: name one of ${scenarios.map((s) => s.name).join(", ")}`);
  const params = new Map<string, string>();
  for (const kv of values.set ?? []) {
    const eq = kv.indexOf("=");
    if (eq < 1) throw new UsageError(`scenario: --set wants key=value, got "${kv}"`);
    params.set(kv.slice(0, eq), kv.slice(eq + 1));
  }
  const scenario = (() => {
    try {
      return scenarioByName(name);
    } catch (err) {
      throw new UsageError((err as Error).message);
    }
  })();
  const stateDir = values["state-dir"] ?? defaultLabDir();
  if (readLabRuntime(stateDir) === "kind")
    throw new Error(
      "scenarios are not available on the kind runtime yet: they read the netns lab's node namespaces and run its own echo and traffic programs (lab/README.md)",
    );
  const report = await scenario.run({
    stateDir,
    params,
    out: process.stderr,
    exec: realExec,
  });
  console.log(formatScenarioReport(report));
  return 0;
}
