#!/usr/bin/env node
// Runs every test of the repository through node's test runner (with tsx), then prints one summary: the plain
// line "N passed, N failed, N skipped". Arguments are words a test file's path must contain, or paths of files to
// run as they are (a fixture outside the test folders).
//
// By default one `node --test` process runs every file, one at a time (the runner's concurrency on two cores).
// SWITCHYARD_TEST_LANES=2 splits them into two lanes run at once: "engine" has the suites that drive a Docker
// engine (kind clusters, images: a file that calls dockerEngine()), one after another; "host" has the rest. On
// this project's 2-core CI machine two lanes were slower, not faster: the engine lane alone took 2722 s, more
// than the whole one-lane run before it (2459 s), since a kind cluster and a netns lab at once starve each other.
// Lines of a lane are marked with its name, and each lane prints its own summary line.
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

const oneLane = process.env.SWITCHYARD_TEST_LANES !== "2";
const usesEngine = (file) => /\bdockerEngine\(/.test(readFileSync(file, "utf8"));
const lanes = oneLane
  ? [{ name: "all", files }]
  : [
      { name: "engine", files: files.filter(usesEngine) },
      { name: "host", files: files.filter((f) => !usesEngine(f)) },
    ].filter((lane) => lane.files.length > 0);

const tmp = mkdtempSync(join(tmpdir(), "switchyard-test-"));
// The lines where an e2e suite says how long its lab or cluster took to come up ("# kind up ...: ... 101.0 s in
// all", "# netns lab up with ... in 22.2 s"), repeated in the summary: the end of a long run's output is what a
// reader gets to see, and the same suite's time differs most between runs in its bring-up.
const labUpLine = /^\s*# .*\bup\b.* in [\d.]+ ?s\b/;
const labUps = [];

/** One `node --test` process over a lane's files; its spec output goes to stdout, each line marked with the lane. */
function runLane(lane) {
  const tap = join(tmp, `${lane.name}.tap`);
  const times = join(tmp, `${lane.name}.times`);
  const args = [
    "--import",
    "tsx",
    "--test",
    ...(lane.name === "engine" ? ["--test-concurrency=1"] : []),
    "--test-reporter=spec",
    "--test-reporter-destination=stdout",
    "--test-reporter=tap",
    `--test-reporter-destination=${tap}`,
    "--test-reporter=./scripts/test-file-times.mjs",
    `--test-reporter-destination=${times}`,
    ...lane.files.map((f) => f.slice(root.length + 1)),
  ];
  const mark = lanes.length > 1 ? `[${lane.name}] ` : "";
  const child = spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
  const relay = (stream, out) => {
    let rest = "";
    stream.on("data", (d) => {
      const lines = (rest + d).split("\n");
      rest = lines.pop() ?? "";
      for (const line of lines) {
        out.write(`${mark}${line}\n`);
        if (labUpLine.test(line)) labUps.push(`${mark}${line.trim()}`);
      }
    });
    stream.on("end", () => rest && out.write(`${mark}${rest}\n`));
  };
  relay(child.stdout, process.stdout);
  relay(child.stderr, process.stderr);
  const started = Date.now();
  return new Promise((resolve) =>
    child.on("close", (code) => {
      const seconds = ((Date.now() - started) / 1000).toFixed(1);
      const read = (file) => (existsSync(file) ? readFileSync(file, "utf8") : "");
      resolve({ lane, code, tap: read(tap), times: read(times), seconds });
    }),
  );
}

// The tap reporter ends with "# pass N", "# fail N" (and cancelled) for its whole run.
const count = (text, key) => Number(new RegExp(`^# ${key} (\\d+)$`, "m").exec(text)?.[1] ?? 0);
// Its "# skipped N" counts skipped tests only: a skipped describe (a whole kernel or control-plane suite) shows
// only as "ok N - name # SKIP reason". Every such line counts, suites included, and is listed.
const skipsOf = (text) =>
  [...text.matchAll(/^\s*(?:not )?ok \d+ - (.*?) # SKIP ?(.*)$/gm)].map(
    (m) => `${m[1]}: ${m[2] || "skipped"}`,
  );

console.log(
  `test-all: ${files.length} test files in ${lanes.length} lane(s): ${lanes.map((l) => `${l.name} ${l.files.length}`).join(", ")}`,
);
const started = Date.now();
const results = await Promise.all(lanes.map(runLane));
rmSync(tmp, { recursive: true, force: true });

console.log(`\ntest-all: ${((Date.now() - started) / 1000).toFixed(1)}s`);
let [passed, failed, skips, ok] = [0, 0, [], true];
for (const r of results) {
  const laneFailed = count(r.tap, "fail") + count(r.tap, "cancelled");
  console.log(`lane ${r.lane.name}: ${r.lane.files.length} files, ${r.seconds}s, ${laneFailed} failed`);
  passed += count(r.tap, "pass");
  failed += laneFailed;
  skips = [...skips, ...skipsOf(r.tap)];
  ok &&= r.code === 0;
}
// The slowest files of each lane, against the CI budget (each file's own seconds: see test-file-times.mjs).
for (const r of results) {
  const rows = r.times
    .split("\n")
    .filter(Boolean)
    .map((line) => line.split("\t"))
    .sort((a, b) => Number(b[0]) - Number(a[0]));
  console.log(`slowest files of lane ${r.lane.name} (seconds):`);
  for (const [seconds, file] of rows.slice(0, 30))
    console.log(`  ${seconds.padStart(6)}  ${file.slice(root.length + 1)}`);
  const rest = rows.slice(30).reduce((sum, [seconds]) => sum + Number(seconds), 0);
  console.log(`  ${rest.toFixed(1).padStart(6)}  the other ${Math.max(0, rows.length - 30)} files`);
}
if (labUps.length > 0) console.log(`labs and clusters up:\n${labUps.map((l) => `  ${l}`).join("\n")}`);
for (const skip of skips) console.log(`skipped: ${skip}`);
console.log(`${passed} passed, ${failed} failed, ${skips.length} skipped`);
if (noSkip && skips.length > 0)
  console.log(
    `test-all: ${skips.length} skipped with SWITCHYARD_NO_SKIP=1, where every suite must run: failed`,
  );
process.exit(ok && failed === 0 && !(noSkip && skips.length > 0) ? 0 : 1);
