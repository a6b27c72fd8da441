import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { conformanceOnKind } from "../../src/conformance/on-kind.js";
import { compareRuns, comparisonLines, type RunSummary, runTable } from "../../src/conformance/report.js";
import { defaultSkip } from "../../src/conformance/run.js";
import { kindDown } from "../../src/kind/lab-down.js";
import type { StackKind } from "../../src/stack/manifests.js";
import { dockerEngine } from "../../src/testing/docker.js";
import { upTestCluster } from "./test-cluster.js";

// Kubernetes' own e2e suite (e2e.test of the pinned release) against a kind cluster with our stack, then against
// one with upstream's (kube-proxy, CoreDNS and kcm's slice controllers of the same release): every spec that
// passes with upstream's must pass with ours. The [Conformance] specs of sig-network keep it inside CI's budget;
// the wider default focus is `switchyard-lab conformance` (lab/README.md has both runs' tables).
const engine = dockerEngine();
const focus = "\\[sig-network\\].*\\[Conformance\\]";

describe("conformance: sig-network's [Conformance] specs, our stack against upstream's", {
  skip: engine.skip,
}, () => {
  const dirs: string[] = [];
  const runs = new Map<StackKind, RunSummary>();

  after(async () => {
    for (const dir of dirs) {
      await kindDown(dir).catch(() => {});
      rmSync(dir, { recursive: true, force: true });
    }
  });

  /** A cluster with the stack, the suite against it, the cluster down again (two at once do not fit two cores). */
  async function runOn(stackKind: StackKind): Promise<RunSummary> {
    const dir = mkdtempSync(join(tmpdir(), `switchyard-conformance-${stackKind}-`));
    dirs.push(dir);
    const { state } = await upTestCluster(engine, dir, `sy-cf-${stackKind.slice(0, 2)}`, stackKind);
    console.log(`# kind up with the ${stackKind} stack in ${state.upSeconds?.toFixed(1)} s`);
    const summary = await conformanceOnKind({
      stateDir: dir,
      focus,
      skip: defaultSkip,
      procs: 4,
      out: join(dir, "report"),
      sink: process.stderr,
    });
    for (const line of runTable(summary)) console.log(`# ${line}`);
    await kindDown(dir);
    return summary;
  }

  test("our stack: the specs run and report", async () => {
    const ours = await runOn("switchyard");
    runs.set("switchyard", ours);
    assert.ok(
      ours.specs.some((s) => s.status === "passed"),
      "some spec passed with our stack",
    );
  });

  test("upstream's stack, then the comparison: nothing passes with upstream's and fails with ours", async () => {
    const ours = runs.get("switchyard");
    assert.ok(ours, "our stack's run finished first");
    const upstream = await runOn("upstream");
    const c = compareRuns(ours, upstream);
    for (const line of comparisonLines(c)) console.log(`# ${line}`);
    // An anchor that passed nothing would make the comparison empty, not a pass.
    assert.ok(c.bothPass > 0, "specs passed with both stacks");
    assert.deepEqual(
      c.regressions.map((r) => `${r.name}: ${r.reason}`),
      [],
      "every spec upstream's stack passes, ours passes",
    );
  });
});
