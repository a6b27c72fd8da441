import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { kindPaths } from "../kind/paths.js";
import { spawnExec } from "../kind/spawn-exec.js";
import { kindWorkloadImages } from "../migrate/migrate-lab.js";
import { realExec } from "../netns/exec.js";
import { defaultLabDir, readLabRuntime } from "../netns/state.js";
import { scenarioByName, scenarios } from "../scenarios/index.js";
import { formatScenarioReport } from "../scenarios/report.js";
import type { ScenarioContext } from "../scenarios/scenario.js";
import { scenarioKindState } from "../scenarios/scenario-lab.js";
import { repoRoot } from "../self.js";
import { parseFlags, UsageError } from "./usage.js";

export const scenarioHelp = `switchyard-lab scenario <name> [--set key=value ...] [--state-dir DIR]

Runs a scenario against a running lab (switchyard-lab up) and prints what it measured next to the claims of
shared/reference/claims.md it tests. --set changes a scenario's sizes and timings (see docs/workshop).

${scenarios.map((s) => `  ${s.name.padEnd(14)} ${s.summary}${s.claims.length ? ` (${s.claims.join(", ")})` : ""}`).join("\n")}`;

/** A kind lab's nodes are entered with `docker exec`; the echo and traffic images are built and loaded first. */
async function kindContext(stateDir: string): Promise<NonNullable<ScenarioContext["kind"]>> {
  const state = scenarioKindState(stateDir);
  const tools = await kindToolsOnThisMachine(process.stderr);
  const exec = spawnExec(kindPaths(stateDir).commandLog);
  return {
    docker: tools.docker,
    loadImages: kindWorkloadImages(exec, tools, state.input.name, repoRoot, kindPaths(stateDir).commandLog),
  };
}

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
  const report = await scenario.run({
    stateDir,
    params,
    out: process.stderr,
    exec: realExec,
    ...(readLabRuntime(stateDir) === "kind" ? { kind: await kindContext(stateDir) } : {}),
  });
  console.log(formatScenarioReport(report));
  return 0;
}
