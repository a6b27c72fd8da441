import { existsSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { conformanceOnKind } from "../conformance/on-kind.js";
import { conformanceOnNetns } from "../conformance/on-netns.js";
import { compareRuns, comparisonLines, type RunSummary, runTable } from "../conformance/report.js";
import { defaultFocus, defaultSkip } from "../conformance/run.js";
import { readLabRuntime } from "../netns/state.js";
import type { Command, Invocation } from "./command.js";
import { labDir, labStateDirFlag } from "./flags.js";
import { UsageError } from "./usage.js";

const defaultProcs = 4;

/** A run's summary, from its summary.json or the folder holding it. */
function readSummary(path: string): RunSummary {
  const file = existsSync(path) && statSync(path).isDirectory() ? join(path, "summary.json") : path;
  if (!existsSync(file)) throw new UsageError(`conformance compare: no summary at ${file}`);
  return JSON.parse(readFileSync(file, "utf8")) as RunSummary;
}

const compareCmd: Command = {
  name: "compare",
  summary: "every spec that passes with upstream's stack must pass with ours; exit 1 when one does not",
  description:
    "Compares two runs' summary.json files (or the folders holding them): every spec that passed with " +
    "upstream's stack must pass with Switchyard's. Prints both counts and each regression; exits 1 when " +
    "there is one.",
  args: [
    { name: "OURS", help: "the summary of a run against Switchyard's stack (file or folder)" },
    { name: "UPSTREAM", help: "the summary of a run against upstream's stack (file or folder)" },
  ],
  examples: [
    "switchyard-lab conformance compare /tmp/lab/conformance/switchyard /tmp/lab/conformance/upstream",
  ],
  async run(inv) {
    const [ours = "", upstream = ""] = inv.positionals;
    const c = compareRuns(readSummary(ours), readSummary(upstream));
    console.log(comparisonLines(c).join("\n"));
    return c.regressions.length === 0 ? 0 : 1;
  },
};

async function runConformance(inv: Invocation): Promise<number> {
  const procs = Number(inv.string("procs") ?? defaultProcs);
  if (!Number.isInteger(procs) || procs < 1 || procs > 16)
    throw new UsageError(`conformance: --procs must be 1-16, got "${inv.string("procs")}"`);
  const stateDir = labDir(inv.string("state-dir"));
  const runtime = readLabRuntime(stateDir);
  if (!runtime) throw new Error(`conformance: no lab in ${stateDir}; run switchyard-lab up`);
  const run = runtime === "kind" ? conformanceOnKind : conformanceOnNetns;
  const out = inv.string("out");
  const summary = await run({
    stateDir,
    focus: inv.string("focus") ?? defaultFocus,
    skip: inv.string("skip") ?? defaultSkip,
    procs,
    ...(out ? { out } : {}),
    extra: [...inv.passthrough],
    sink: process.stderr,
  });
  console.log(runTable(summary).join("\n"));
  return 0;
}

export const conformanceCommand: Command = {
  name: "conformance",
  group: "Scenarios and tests",
  summary: "Kubernetes' own e2e suite (sig-network) against the running lab",
  description:
    "Runs Kubernetes' own e2e suite (e2e.test of the pinned release, built from packages/testbed/upstream on " +
    "first use) against the running lab in --state-dir, kind or netns, whichever stack it runs (up --stack " +
    "switchyard|upstream), and prints each spec that ran with its result. On netns nothing is loaded: the node " +
    "agents resolve the suite's images, and a spec whose image they cannot run fails. The JUnit report, the " +
    "suite's log and summary.json go to --out. Arguments after -- go to e2e.test.",
  synopsis: "[COMMAND] [flags] [-- E2E_TEST_FLAGS...]",
  passthrough: "after-dashdash",
  flags: [
    { name: "focus", value: "REGEX", default: defaultFocus, help: "the specs to run (ginkgo's --focus)" },
    { name: "skip", value: "REGEX", default: defaultSkip, help: "the specs to leave out (ginkgo's --skip)" },
    {
      name: "procs",
      value: "N",
      default: String(defaultProcs),
      help: "specs run in this many processes at once, 1-16 (ginkgo's CLI; 1: e2e.test alone)",
    },
    {
      name: "out",
      value: "DIR",
      default: "<state-dir>/../conformance/<stack>",
      help: "where the reports go",
      complete: "dir",
    },
    labStateDirFlag,
  ],
  subcommands: [compareCmd],
  examples: [
    "switchyard-lab conformance",
    "switchyard-lab conformance --focus 'Services should serve a basic endpoint' --procs 1",
    "switchyard-lab conformance compare ours/summary.json upstream/summary.json",
  ],
  run: runConformance,
};
