import { join } from "node:path";
import { cacheBinDir, missingBinariesMessage, resolveBinary } from "@switchyard/testbed/upstream";
import { readLabState } from "../netns/state.js";
import { ensureSuite, type KindConformanceRun, numNodes } from "./on-kind.js";
import type { RunSummary } from "./report.js";
import { runConformance } from "./run.js";

/** The same flags as on kind; the state directory is a netns lab's (up --runtime netns). */
export type NetnsConformanceRun = KindConformanceRun;

/**
 * Runs the suite against a netns lab that is up with a stack, through its admin kubeconfig and the pinned kubectl.
 * Nothing is loaded: the node agents resolve the suite's images themselves (src/agent/images.ts: agnhost from
 * packages/testbed/upstream's binary, busybox from the host's, pause); a pod whose image they cannot run gets
 * an event, and its spec fails.
 */
export async function conformanceOnNetns(r: NetnsConformanceRun): Promise<RunSummary> {
  const state = readLabState(r.stateDir);
  if (!state?.kubeconfig || !state.stack)
    throw new Error(
      `the netns lab in ${r.stateDir} is not up with a stack; run switchyard-lab up --runtime netns`,
    );
  const stack = state.stack.kind ?? "switchyard";
  const kubectl = resolveBinary("kubectl").path;
  if (!kubectl) throw new Error(missingBinariesMessage(["kubectl"], cacheBinDir()));
  const { e2eTest, ginkgo } = await ensureSuite();
  return runConformance({
    e2eTest,
    ...(r.procs > 1 ? { ginkgo: { path: ginkgo, procs: r.procs } } : {}),
    kubectl,
    kubeconfig: state.kubeconfig,
    focus: r.focus,
    skip: r.skip,
    dir: r.out ?? join(r.stateDir, "..", "conformance", stack),
    stack,
    runtime: "netns",
    out: r.sink,
    extra: [...numNodes(state.plan.nodeList.length, r.extra ?? []), ...(r.extra ?? [])],
  });
}
