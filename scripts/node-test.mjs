#!/usr/bin/env node
// Runs one workspace's tests (test/**/*.test.ts) with node's test runner through tsx.
// Used by each workspace's "test" script; `npm test` at the root runs every workspace at once instead
// (scripts/test-all.mjs) so that the whole suite ends in one summary line.
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";

function findTests(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(path));
    else if (entry.name.endsWith(".test.ts")) out.push(path);
  }
  return out.sort();
}

const files = process.argv.length > 2 ? process.argv.slice(2) : findTests("test");
if (files.length === 0) {
  console.log("no tests in", process.cwd());
  process.exit(0);
}
const result = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", ...files], {
  stdio: "inherit",
});
process.exit(result.status ?? 1);
