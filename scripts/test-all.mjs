#!/usr/bin/env node
// Runs every test of the repository in one node --test run (through tsx), so the whole suite ends with one
// summary, then prints it as the plain line "N passed, N failed, N skipped". Arguments are words a test file's
// path must contain, or paths of files to run as they are (a fixture outside the test folders).
// SWITCHYARD_NO_SKIP=1 (CI sets it: its machine has root, the kernel, the control plane, upstream's binaries
// and Docker) turns every skipped test or suite into a failure of the run, so a suite cannot stop running
// unnoticed.
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");

function findTests(dir) {
  if (!existsSync(dir)) return [];
  const out = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === "node_modules" || entry.name === "dist") continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...findTests(path));
    else if (entry.name.endsWith(".test.ts")) out.push(path);
  }
  return out;
}

const groups = ["packages", "apps"].flatMap((g) =>
  existsSync(join(root, g)) ? readdirSync(join(root, g)).map((d) => join(root, g, d, "test")) : [],
);
const given = process.argv.slice(2);
const explicit = given.filter((a) => a.endsWith(".ts") && existsSync(a)).map((a) => join(process.cwd(), a));
const filter = given.filter((a) => !(a.endsWith(".ts") && existsSync(a)));
const noSkip = process.env.SWITCHYARD_NO_SKIP === "1";
const found =
  explicit.length > 0 && filter.length === 0
    ? []
    : [...groups, join(root, "lab", "test"), join(root, "test")]
        .flatMap(findTests)
        .filter((f) => filter.length === 0 || filter.some((word) => f.includes(word)));
const files = [...found, ...explicit].sort();
if (files.length === 0) {
  console.error("test-all: no test files found");
  process.exit(1);
}

const tmp = mkdtempSync(join(tmpdir(), "switchyard-test-"));
const tap = join(tmp, "results.tap");
const args = [
  "--import",
  "tsx",
  "--test",
  "--test-reporter=spec",
  "--test-reporter-destination=stdout",
  "--test-reporter=tap",
  `--test-reporter-destination=${tap}`,
  ...files.map((f) => f.slice(root.length + 1)),
];
console.log(`test-all: ${files.length} test files`);
const started = Date.now();
const child = spawn(process.execPath, args, { cwd: root, stdio: "inherit" });
child.on("close", (code) => {
  const text = existsSync(tap) ? readFileSync(tap, "utf8") : "";
  // The tap reporter ends with "# pass N", "# fail N" (and cancelled/todo) for the whole run.
  const count = (key) => Number(new RegExp(`^# ${key} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
  const failed = count("fail") + count("cancelled");
  // Its "# skipped N" counts skipped tests only: a skipped describe (a whole kernel or control-plane suite)
  // shows only as "ok N - name # SKIP reason". Every such line counts, suites included, and is listed.
  const skips = [...text.matchAll(/^\s*(?:not )?ok \d+ - (.*?) # SKIP ?(.*)$/gm)].map(
    (m) => `${m[1]}: ${m[2] || "skipped"}`,
  );
  rmSync(tmp, { recursive: true, force: true });
  console.log(`\ntest-all: ${((Date.now() - started) / 1000).toFixed(1)}s`);
  for (const skip of skips) console.log(`skipped: ${skip}`);
  console.log(`${count("pass")} passed, ${failed} failed, ${skips.length} skipped`);
  if (noSkip && skips.length > 0)
    console.log(
      `test-all: ${skips.length} skipped with SWITCHYARD_NO_SKIP=1, where every suite must run: failed`,
    );
  process.exit(code === 0 && failed === 0 && !(noSkip && skips.length > 0) ? 0 : 1);
});
