import { join } from "node:path";
import { Progress, type ProgressSink } from "@switchyard/testbed/progress";
import { buildUpstream, resolveBinary } from "@switchyard/testbed/upstream";
import { kindToolsOnThisMachine } from "../kind/machine-tools.js";
import { kindPaths } from "../kind/paths.js";
import { spawnExec } from "../kind/spawn-exec.js";
import { readKindState } from "../kind/state.js";
import { repoRoot } from "../self.js";
import { e2eImagesOnKind } from "./kind-images.js";
import type { RunSummary } from "./report.js";
import { runConformance } from "./run.js";

export interface KindConformanceRun {
  /** The kind lab's state directory (up --runtime kind). */
  stateDir: string;
  focus: string;
  skip: string;
  /** Ginkgo processes; 1 runs e2e.test alone. */
  procs: number;
  /** Where the report goes; default <state-dir>/../conformance/<stack>. */
  out?: string;
  extra?: readonly string[];
  sink: ProgressSink;
}

/**
 * The suite, its test programs and ginkgo of the pinned release, built from packages/testbed/upstream when
 * first wanted.
 */
export async function ensureSuite(): Promise<{ e2eTest: string; ginkgo: string }> {
  const wanted = ["e2e.test", "agnhost", "ginkgo", "regression-issue-74839"] as const;
  if (wanted.some((name) => !resolveBinary(name).path)) await buildUpstream({ only: wanted });
  return {
    e2eTest: resolveBinary("e2e.test").path ?? "e2e.test",
    ginkgo: resolveBinary("ginkgo").path ?? "ginkgo",
  };
}

/**
 * The suite counts the schedulable nodes in its first process only; the others keep -1 and skip every spec that
 * needs two nodes ("Requires at least 2 nodes (not -1)"), so which specs run depended on which process got them.
 * Told the count, every process knows it. A --num-nodes of the caller's wins.
 */
export function numNodes(nodes: number | undefined, extra: readonly string[]): string[] {
  if (nodes === undefined || extra.some((a) => a.startsWith("--num-nodes"))) return [];
  return [`--num-nodes=${nodes}`];
}

/**
 * Runs the suite against a kind lab that is up with a stack: the suite built if need be, its test images in the
 * nodes, then the specs. The command and the CI test that compares both stacks share this.
 */
export async function conformanceOnKind(r: KindConformanceRun): Promise<RunSummary> {
  const state = readKindState(r.stateDir);
  if (!state?.server || !state.stack)
    throw new Error(
      `the kind lab in ${r.stateDir} is not up with a stack; run switchyard-lab up --runtime kind`,
    );
  const stack = state.stack.kind ?? "switchyard";
  const tools = await kindToolsOnThisMachine(r.sink);
  const { e2eTest, ginkgo } = await ensureSuite();
  const log = kindPaths(r.stateDir).commandLog;
  const progress = new Progress("conformance", r.sink);
  await e2eImagesOnKind(spawnExec(log), tools.docker, state.input.name, e2eTest, repoRoot, log, progress);
  return runConformance({
    e2eTest,
    ...(r.procs > 1 ? { ginkgo: { path: ginkgo, procs: r.procs } } : {}),
    kubectl: tools.kubectl,
    kubeconfig: state.kubeconfig,
    focus: r.focus,
    skip: r.skip,
    dir: r.out ?? join(r.stateDir, "..", "conformance", stack),
    stack,
    runtime: "kind",
    out: r.sink,
    extra: [...numNodes(state.input.nodes, r.extra ?? []), ...(r.extra ?? [])],
  });
}
