#!/usr/bin/env node
// The README's commands: `npm test`, `npm run lab`, `npm run bench` (and `npm run upstream`, `npm run screenshots`). Each first installs what is missing, with
// progress, then runs its job; a second run finds everything in place and goes straight to the job.
//   1. system tools (Debian packages; installed with apt-get when root, else the exact command is printed)
//   2. npm dependencies (npm ci when node_modules is missing or older than package-lock.json)
//   3. the TypeScript build (turbo, cached)
//   4. the upstream binaries (built from packages/testbed/upstream into ~/.cache/switchyard, reused when
//      present)
//   5. for `test`: a Docker engine for the container tests (scripts/docker-engine.mjs: the one `docker info`
//      answers, else a private one when root on Linux; without either those tests skip and say why)
// `npm run images` needs only 0 and the engine: the images are built inside Docker (scripts/images.mjs).
//   0. the project's Node (.node-version): when the running Node is another major line, it is installed into
//      ~/.cache/switchyard/node and this script runs again under it, with its bin directory first on PATH so
//      that npm, npx, turbo and tsx run on it too (scripts/project-node.mjs)
// Plain Node with no dependencies: it must run before `npm ci` has, on the system's Node, whatever it is.
import { spawnSync } from "node:child_process";
import { existsSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { ensureEngine } from "./docker-engine.mjs";
import { buildImages } from "./images.mjs";
import { labCommandLine } from "./lab-args.mjs";
import { ensureProjectNode, runningWantedMajor, wantedNodeVersion } from "./project-node.mjs";

const root = join(import.meta.dirname, "..");

if (!runningWantedMajor()) {
  const node = ensureProjectNode();
  console.error(
    `[setup] Node ${process.versions.node} is not the project's line: running under ${wantedNodeVersion()}`,
  );
  const env = { ...process.env, PATH: `${dirname(node)}${delimiter}${process.env.PATH ?? ""}` };
  const again = spawnSync(node, process.argv.slice(1), { stdio: "inherit", env });
  process.exit(again.status ?? 1);
}

const job = process.argv[2];
const jobArgs = process.argv.slice(3);

// command -> Debian package that provides it. What the lab and the upstream build need (`npm run lab`,
// `npm run upstream`): the netns runtime's kernel tools, and the host programs the lab's catalog images run in the
// workshop's pods (lab/src/agent/image-catalog.ts: busybox's applets, agnhost's dig, curl and netcat-openbsd's nc).
const labTools = {
  nft: "nftables",
  iptables: "iptables",
  "iptables-legacy": "iptables",
  ipset: "ipset",
  ip: "iproute2",
  ss: "iproute2",
  conntrack: "conntrack",
  dig: "dnsutils",
  openssl: "openssl",
  flock: "util-linux",
  curl: "curl",
  nfacct: "nfacct",
  nc: "netcat-openbsd",
  // The busybox image is the host's static busybox (lab/src/agent/busybox.ts reads /bin/busybox).
  busybox: "busybox-static",
};
// What only the test suite runs (`npm test`), on top of the lab's.
const testTools = {
  // The cluster-dns image test loads the container with it (apps/cluster-dns/test/image-kubeadm.test.ts).
  dnsperf: "dnsperf",
  // switchyard-lab's completion scripts and `shell` are tested in each shell (lab/test/cli/process.test.ts).
  zsh: "zsh",
  fish: "fish",
  // The dashboard's pages are tested in a real browser (lab/test/dashboard, lab/test/netns/dashboard.e2e.test.ts).
  chromium: "chromium",
  // The e2e suite's nginx image, on the netns lab, is the host's nginx (the conformance tests run it).
  nginx: "nginx",
};
// The benchmarks time commands with hyperfine and load the resolver with dnsperf (bench/resolver).
const benchTools = { hyperfine: "hyperfine", dnsperf: "dnsperf" };

function step(name, fn) {
  const started = Date.now();
  const result = fn();
  if (result !== "skip")
    console.error(`[setup] ${name}: done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return result;
}

function has(cmd) {
  return spawnSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" }).status === 0;
}

function run(cmd, args, opts = {}) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit", ...opts });
  if (r.status !== 0) {
    console.error(`[setup] failed: ${cmd} ${args.join(" ")} (exit ${r.status ?? r.signal})`);
    process.exit(r.status ?? 1);
  }
}

function ensureSystemTools(tools) {
  const missing = [
    ...new Set(
      Object.entries(tools)
        .filter(([cmd]) => !has(cmd))
        .map(([, pkg]) => pkg),
    ),
  ];
  if (missing.length === 0) return "skip";
  const install = `apt-get update && apt-get install -y --no-install-recommends ${missing.join(" ")}`;
  if (process.getuid?.() !== 0 || !has("apt-get")) {
    console.error(
      `[setup] missing system packages: ${missing.join(", ")}. Install them, then run this again:\n  sudo sh -c '${install}'`,
    );
    process.exit(1);
  }
  console.error(`[setup] installing system packages: ${missing.join(", ")}`);
  run("sh", [
    "-c",
    `DEBIAN_FRONTEND=noninteractive ${install} >/tmp/switchyard-apt.log 2>&1 || { tail -20 /tmp/switchyard-apt.log; exit 1; }`,
  ]);
}

function ensureNpm() {
  const marker = join(root, "node_modules", ".package-lock.json");
  if (existsSync(marker) && statSync(marker).mtimeMs >= statSync(join(root, "package-lock.json")).mtimeMs)
    return "skip";
  console.error("[setup] installing npm dependencies (npm ci)");
  run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
}

function build() {
  run("npx", ["turbo", "run", "build", "--output-logs=errors-only", "--log-prefix=none"]);
}

function upstream(only) {
  const args = only ? ["upstream", "build", "--only", only.join(",")] : ["upstream", "build"];
  run(process.execPath, [join(root, "lab", "bin", "switchyard-lab.js"), ...args]);
}

// `npm run lab [flags]` brings a lab up; `npm run lab <command> ...` (down, status, scenario ...) runs that
// switchyard-lab command instead (scripts/lab-args.mjs), after the npm and build steps only: taking a lab down
// needs neither system packages nor upstream binaries.
const labArgs = labCommandLine(jobArgs);
const labUp = job === "lab" && labArgs[0] === "up";

// `npm run lab` on the kind runtime (asked for, or not root, so netns cannot work): no network-namespace
// tools and only kubectl from upstream (no kind CLI: `up` makes the nodes through testcontainers; the cluster's own
// components come from the kindest/node image). Which runtime `up` picks is decided in
// lab/src/kind/select-runtime.ts; this only avoids installing what that runtime does not use.
const runtimeFlag = jobArgs.indexOf("--runtime");
const wantsKind =
  labUp &&
  (jobArgs[runtimeFlag + 1] === "kind" ||
    jobArgs.includes("--runtime=kind") ||
    (runtimeFlag < 0 && process.getuid?.() !== 0));

const screenshotsTest = join("lab", "test", "netns", "dashboard.e2e.test.ts");

const jobs = {
  test: () => run(process.execPath, [join(root, "scripts", "test-all.mjs"), ...jobArgs]),
  // The whole lab: control plane, nodes as network namespaces, the stack deployed from its manifests (root).
  lab: () => run(process.execPath, [join(root, "lab", "bin", "switchyard-lab.js"), ...labArgs]),
  bench: () => run(process.execPath, [join(root, "bench", "run.mjs"), ...jobArgs]),
  // The docs' dashboard screenshots, on purpose: the dashboard's end-to-end test on a netns lab, told to write them
  // into docs/images (in `npm test` it writes into its own temporary folder). A skip fails: no picture is no run.
  screenshots: () =>
    run(process.execPath, [join(root, "scripts", "test-all.mjs"), screenshotsTest], {
      env: {
        ...process.env,
        SWITCHYARD_SCREENSHOTS_DIR: join(root, "docs", "images"),
        SWITCHYARD_NO_SKIP: "1",
      },
    }),
  upstream: () => {},
};

// The engine for the container tests; children find it through DOCKER_HOST.
async function dockerEngine() {
  try {
    const host = await ensureEngine();
    if (host) process.env.DOCKER_HOST = host;
  } catch (err) {
    console.error(`[setup] no Docker engine, the container tests will skip: ${err.message}`);
  }
}

if (job === "images") {
  const names = jobArgs.filter((a) => !a.startsWith("-"));
  try {
    const upstream = jobArgs.includes("--upstream");
    await buildImages(names.length > 0 || upstream ? names : undefined, {
      forceLocal: jobArgs.includes("--local-bases"),
      upstream,
    });
  } catch (err) {
    console.error(`[images] ${err.message}`);
    process.exit(1);
  }
  process.exit(0);
}

if (!jobs[job]) {
  console.error(`usage: node scripts/run.mjs ${[...Object.keys(jobs), "images"].join("|")} [args]`);
  process.exit(2);
}
const labOther = job === "lab" && !labUp;
const jobTools = {
  test: { ...labTools, ...testTools },
  screenshots: { ...labTools, ...testTools },
  bench: { ...labTools, ...benchTools },
};
step("system packages", () => ensureSystemTools(wantsKind || labOther ? {} : (jobTools[job] ?? labTools)));
step("npm dependencies", ensureNpm);
step("build", build);
if (!labOther) step("upstream binaries", () => upstream(wantsKind ? ["kubectl"] : undefined));
if (job === "test") await dockerEngine();
jobs[job]();
