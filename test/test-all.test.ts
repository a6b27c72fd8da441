// The runner itself (scripts/test-all.mjs): a skipped suite counts as skipped, and under SWITCHYARD_NO_SKIP=1
// (what CI sets) it fails the run, so a kernel or control-plane suite cannot stop running unnoticed; with
// SWITCHYARD_TEST_LANES=2 the Docker engine's suites run in a lane of their own beside the rest, and either lane's
// failure fails the run.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

const root = join(import.meta.dirname, "..");

function runFixture(noSkip: boolean, fixtures = ["skipping-suite.ts"], extra: Record<string, string> = {}) {
  // Without NODE_TEST_CONTEXT, which would make the inner run report to this one instead of to its own files.
  const { NODE_TEST_CONTEXT: _, ...outer } = process.env;
  const env = { ...outer, SWITCHYARD_NO_SKIP: noSkip ? "1" : "0", ...extra };
  const files = fixtures.map((f) => `test/fixtures/${f}`);
  const r = spawnSync(process.execPath, ["scripts/test-all.mjs", ...files], {
    cwd: root,
    env,
    encoding: "utf8",
  });
  return { status: r.status, out: r.stdout + r.stderr };
}

test("a skipped suite is counted and named; the run passes when skips are allowed", () => {
  const r = runFixture(false);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /^skipped: a kernel suite: needs root \(fixture\)$/m);
  assert.match(r.out, /^1 passed, 0 failed, 1 skipped$/m);
});

test("SWITCHYARD_NO_SKIP=1: the same skip fails the run, saying why", () => {
  const r = runFixture(true);
  assert.equal(r.status, 1, r.out);
  assert.match(r.out, /^test-all: 1 skipped with SWITCHYARD_NO_SKIP=1, where every suite must run: failed$/m);
});

const twoLanes = { SWITCHYARD_TEST_LANES: "2" };

test("SWITCHYARD_TEST_LANES=2: a suite that drives a Docker engine runs in its own lane; the counts add up", () => {
  const r = runFixture(false, ["skipping-suite.ts", "engine-suite.ts"], twoLanes);
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /^test-all: 2 test files in 2 lane\(s\): engine 1, host 1$/m);
  assert.match(r.out, /^\[engine\] .*an engine-lane test/m);
  assert.match(r.out, /^\[host\] .*a unit test/m);
  assert.match(r.out, /^lane engine: 1 files, [\d.]+s, 0 failed$/m);
  assert.match(r.out, /^2 passed, 0 failed, 1 skipped$/m);
});

test("a failure in one lane fails the run; by default one lane runs everything", () => {
  const failing = runFixture(false, ["skipping-suite.ts", "engine-suite.ts"], {
    ...twoLanes,
    FIXTURE_FAIL: "1",
  });
  assert.equal(failing.status, 1, failing.out);
  assert.match(failing.out, /^lane engine: 1 files, [\d.]+s, 1 failed$/m);
  assert.match(failing.out, /^1 passed, 1 failed, 1 skipped$/m);
  const one = runFixture(false, ["skipping-suite.ts", "engine-suite.ts"]);
  assert.equal(one.status, 0, one.out);
  assert.match(one.out, /^test-all: 2 test files in 1 lane\(s\): all 2$/m);
});
