import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { conformanceOnKind } from "../conformance/on-kind.js";
import { conformanceOnNetns } from "../conformance/on-netns.js";
import { compareRuns, comparisonLines, type RunSummary, runTable } from "../conformance/report.js";
import { defaultFocus, defaultSkip } from "../conformance/run.js";
import { defaultLabDir, readLabRuntime } from "../netns/state.js";
import { parseFlags, UsageError } from "./usage.js";

export const conformanceHelp = `switchyard-lab conformance [--focus REGEX] [--skip REGEX] [--procs 4] [--out DIR] [--state-dir DIR]
                           [-- e2e.test flags]
switchyard-lab conformance compare OURS UPSTREAM

Runs Kubernetes' own e2e suite (e2e.test of the pinned release, built from lab/upstream on first use) against the
running lab in --state-dir, kind or netns, whichever stack it runs (up --stack switchyard|upstream), and prints
each spec that ran with its result. On netns nothing is loaded: the node agents resolve the suite's images, and a
spec whose image they cannot run fails. --procs runs the specs in that many processes at once (ginkgo's CLI; 1: e2e.test alone). The
default focus is ${defaultFocus} without ${defaultSkip.replaceAll("\\", "")}.
The JUnit report, the suite's log and summary.json go to --out (default <state-dir>/../conformance/<stack>).
\`compare\` takes two summary.json files (or their folders): every spec that passes with upstream's stack must
pass with ours; it exits 1 when one does not.`;

/** A run's summary, from its summary.json or the folder holding it. */
function readSummary(path: string): RunSummary {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, "summary.json") : path;
  if (!existsSync(file)) throw new UsageError(`conformance compare: no summary at ${file}`);
  return JSON.parse(readFileSync(file, "utf8")) as RunSummary;
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
  const runtime = readLabRuntime(stateDir);
  if (!runtime) throw new Error(`conformance: no lab in ${stateDir}; run switchyard-lab up`);
  const run = runtime === "kind" ? conformanceOnKind : conformanceOnNetns;
  const summary = await run({
    stateDir,
    focus: values.focus ?? defaultFocus,
    skip: values.skip ?? defaultSkip,
    procs,
    ...(values.out ? { out: values.out } : {}),
    extra: split < 0 ? [] : rest.slice(split + 1),
    sink: process.stderr,
  });
  console.log(runTable(summary).join("\n"));
  return 0;
}
