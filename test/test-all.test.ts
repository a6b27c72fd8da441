// The runner itself (scripts/test-all.mjs): a skipped suite counts as skipped, and under SWITCHYARD_NO_SKIP=1
// (what CI sets) it fails the run, so a kernel or control-plane suite cannot stop running unnoticed.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { test } from "node:test";

const root = join(import.meta.dirname, "..");

function runFixture(noSkip: boolean) {
  // Without NODE_TEST_CONTEXT, which would make the inner run report to this one instead of to its own files.
  const { NODE_TEST_CONTEXT: _, ...outer } = process.env;
  const env = { ...outer, SWITCHYARD_NO_SKIP: noSkip ? "1" : "0" };
  const r = spawnSync(process.execPath, ["scripts/test-all.mjs", "test/fixtures/skipping-suite.ts"], {
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
