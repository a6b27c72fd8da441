import { didYouMean, suggestionsFor } from "@switchyard/kube/flags";
import { realExec } from "../exec.js";
import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { kindPaths } from "../kind/paths.js";
import { spawnExec } from "../kind/spawn-exec.js";
import { kindWorkloadImages } from "../migrate/migrate-lab.js";
import { readLabRuntime } from "../netns/state.js";
import { scenarios } from "../scenarios/index.js";
import { formatScenarioReport } from "../scenarios/kit/report.js";
import type { Scenario, ScenarioContext, ScenarioParam } from "../scenarios/kit/scenario.js";
import { scenarioKindState } from "../scenarios/kit/scenario-lab.js";
import { repoRoot } from "../self.js";
import type { Command, Invocation } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";
import { columns } from "./help.js";
import { UsageError } from "./usage.js";

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

/**
 * The parameters a run gets: each --set key=value (a key the scenario does not declare is refused, with a
 * suggestion), and with --full the claim's own size for every parameter that has one and was not --set.
 */
export function scenarioParams(s: Scenario, sets: readonly string[], full: boolean): Map<string, string> {
  const where = `scenario ${s.name}`;
  const keys = s.params.map((p) => p.key);
  const params = new Map<string, string>();
  for (const kv of sets) {
    const eq = kv.indexOf("=");
    if (eq < 1) throw new UsageError(`${where}: --set wants KEY=VALUE, got "${kv}"`);
    const key = kv.slice(0, eq);
    if (!keys.includes(key))
      throw new UsageError(
        `${where}: no parameter "${key}"${didYouMean(suggestionsFor(key, keys))} (it has ${keys.join(", ")})`,
      );
    params.set(key, kv.slice(eq + 1));
  }
  const sized = s.params.filter((p) => p.full !== undefined);
  if (full && sized.length === 0)
    throw new UsageError(`${where}: --full changes nothing here; its defaults are the claims' own sizes`);
  if (full) for (const p of sized) if (!params.has(p.key)) params.set(p.key, p.full as string);
  return params;
}

function paramText(p: ScenarioParam): string {
  const fallback = p.default ?? p.defaultText;
  return `${p.help}${fallback === undefined ? "" : ` (default ${fallback}${p.full ? `; --full: ${p.full}` : ""})`}`;
}

async function runScenario(s: Scenario, inv: Invocation): Promise<number> {
  // Only scenarios with a workshop size declare --full.
  const full = s.params.some((p) => p.full !== undefined) && inv.bool("full");
  const params = scenarioParams(s, inv.list("set") ?? [], full);
  const stateDir = labDir(inv.string("state-dir"));
  const report = await s.run({
    stateDir,
    params,
    out: process.stderr,
    exec: realExec,
    ...(readLabRuntime(stateDir) === "kind" ? { kind: await kindContext(stateDir) } : {}),
  });
  console.log(formatScenarioReport(report));
  return 0;
}

function scenarioCommand(s: Scenario): Command {
  const sized = s.params.filter((p) => p.full !== undefined);
  const claims = s.claims.length > 0 ? ` Claims measured: ${s.claims.join(", ")}.` : "";
  return {
    name: s.name,
    summary: `${s.summary}${s.claims.length ? ` (${s.claims.join(", ")})` : ""}`,
    description:
      `${s.summary.charAt(0).toUpperCase()}${s.summary.slice(1)}.${claims} It runs against the lab that is up in --state-dir (either runtime), deletes what ` +
      "it created and puts back what it changed, also after a failure.\n\n" +
      `Parameters (--set KEY=VALUE):\n${columns(s.params.map((p) => [`  ${p.key}`, paramText(p)]))}`,
    flags: [
      {
        name: "set",
        value: "KEY=VALUE",
        multiple: true,
        help: "a parameter (see Parameters); keys it does not have are refused",
        complete: s.params.map((p) => `${p.key}=`),
      },
      ...(sized.length > 0
        ? [
            {
              name: "full",
              help: `the claims' own sizes (${sized.map((p) => `${p.key}=${p.full}`).join(", ")}); takes longer`,
            },
          ]
        : []),
      labStateDirFlag,
    ],
    examples: [
      `sudo switchyard-lab scenario ${s.name}`,
      ...(sized.length > 0 ? [`sudo switchyard-lab scenario ${s.name} --full`] : []),
    ],
    run: (inv) => runScenario(s, inv),
  };
}

export const scenarioGroup: Command = {
  name: "scenario",
  group: "Scenarios and tests",
  summary: "a scenario that measures claims of docs/claims.md on the running lab",
  description:
    "Runs a scenario against a running lab (switchyard-lab up, either runtime) and prints what it measured next " +
    "to the claims of docs/claims.md it tests (practitioners' write-ups, restated), each with a verdict: holds, half right, wrong, or not " +
    "measured. --set changes a scenario's sizes and timings; long ones default to a workshop size and take " +
    "--full for the claims' own. docs/workshop/07-scenarios.md has what each measured.",
  subcommands: scenarios.map(scenarioCommand),
  examples: [
    "sudo switchyard-lab scenario hints",
    "sudo switchyard-lab scenario slice-churn --set pods=300",
    "switchyard-lab scenario slice-churn --help   # its parameters",
  ],
};
