import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { e2eImagesOnKind } from "../conformance/kind-images.js";
import { compareRuns, comparisonLines, type RunSummary, runTable } from "../conformance/report.js";
import { defaultFocus, defaultSkip, runConformance } from "../conformance/run.js";
import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { kindPaths } from "../kind/paths.js";
import { spawnExec } from "../kind/spawn-exec.js";
import { readKindState } from "../kind/state.js";
import { defaultLabDir, readLabRuntime } from "../netns/state.js";
import { Progress } from "../progress.js";
import { repoRoot } from "../self.js";
import { resolveBinary } from "../upstream/binaries.js";
import { buildUpstream } from "../upstream/build.js";
import { parseFlags, UsageError } from "./usage.js";

export const conformanceHelp = `switchyard-lab conformance [--focus REGEX] [--skip REGEX] [--procs 4] [--out DIR] [--state-dir DIR]
                           [-- e2e.test flags]
switchyard-lab conformance compare OURS UPSTREAM

Runs Kubernetes' own e2e suite (e2e.test of the pinned release, built from lab/upstream on first use) against the
running kind lab, whichever stack it runs (up --stack switchyard|upstream), and prints each spec that ran with
its result. --procs runs the specs in that many processes at once (ginkgo's CLI; 1: e2e.test alone). The
default focus is ${defaultFocus} without ${defaultSkip.replaceAll("\\", "")}.
The JUnit report, the suite's log and summary.json go to --out (default <state-dir>/../conformance/<stack>).
\`compare\` takes two summary.json files (or their folders): every spec that passes with upstream's stack must
pass with ours; it exits 1 when one does not. The netns runtime cannot run the suite yet (its node agent serves
no kubelet API for the suite's kubectl exec and logs).`;

/** A run's summary, from its summary.json or the folder holding it. */
function readSummary(path: string): RunSummary {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, "summary.json") : path;
  if (!existsSync(file)) throw new UsageError(`conformance compare: no summary at ${file}`);
  return JSON.parse(readFileSync(file, "utf8")) as RunSummary;
}

async function ensureSuite(): Promise<{ e2eTest: string; ginkgo: string }> {
  const wanted = ["e2e.test", "agnhost", "ginkgo"] as const;
  if (wanted.some((name) => !resolveBinary(name).path)) await buildUpstream({ only: wanted });
  return {
    e2eTest: resolveBinary("e2e.test").path ?? "e2e.test",
    ginkgo: resolveBinary("ginkgo").path ?? "ginkgo",
  };
}

export async function conformanceCommand(rest: string[]): Promise<number> {
  if (rest[0] === "compare") {
    const [, ours, upstream] = rest;
    if (!ours || !upstream) throw new UsageError("conformance compare: give OURS and UPSTREAM summaries");
    const c = compareRuns(readSummary(ours), readSummary(upstream));
    console.log(comparisonLines(c).join("\n"));
    return c.regressions.length === 0 ? 0 : 1;
  }
  const split = rest.indexOf("--");
  const { values } = parseFlags("conformance", split < 0 ? rest : rest.slice(0, split), {
    focus: { type: "string" },
    skip: { type: "string" },
    out: { type: "string" },
    procs: { type: "string" },
    "state-dir": { type: "string" },
  });
  const procs = Number(values.procs ?? "4");
  if (!Number.isInteger(procs) || procs < 1 || procs > 16)
    throw new UsageError(`conformance: --procs must be 1-16, got "${values.procs}"`);
  const stateDir = values["state-dir"] ?? defaultLabDir();
  if (readLabRuntime(stateDir) !== "kind")
    throw new Error(
      `conformance runs on a kind lab for now (up --runtime kind): the netns node agent serves no kubelet API for the suite's kubectl exec and logs (${stateDir})`,
    );
  const state = readKindState(stateDir);
  if (!state?.server || !state.stack)
    throw new Error(
      `the kind lab in ${stateDir} is not up with a stack; run switchyard-lab up --runtime kind`,
    );
  const stack = state.stack.kind ?? "switchyard";
  const tools = await kindToolsOnThisMachine(process.stderr);
  const { e2eTest, ginkgo } = await ensureSuite();
  const log = kindPaths(stateDir).commandLog;
  const progress = new Progress("conformance", process.stderr);
  await e2eImagesOnKind(spawnExec(log), tools.docker, state.input.name, e2eTest, repoRoot, log, progress);
  const summary = await runConformance({
    e2eTest,
    ...(procs > 1 ? { ginkgo: { path: ginkgo, procs } } : {}),
    kubectl: tools.kubectl,
    kubeconfig: state.kubeconfig,
    focus: values.focus ?? defaultFocus,
    skip: values.skip ?? defaultSkip,
    dir: values.out ?? join(stateDir, "..", "conformance", stack),
    stack,
    runtime: "kind",
    out: process.stderr,
    extra: split < 0 ? [] : rest.slice(split + 1),
  });
  console.log(runTable(summary).join("\n"));
  return 0;
}
