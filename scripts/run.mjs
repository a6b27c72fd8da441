#!/usr/bin/env node
// The README's commands: `npm test`, `npm run lab`, `npm run bench` (and `npm run upstream`, `npm run screenshots`,
// `npm run setup`). Each first installs what is missing, then runs its job; a second run finds everything in place
// and goes straight to the job. Each step ends with one line, `::: <step>: <seconds>s`, as CI's log shows it.
//   1. system tools (Debian packages; installed with apt-get when root, else the exact command is printed)
//   2. npm dependencies (npm ci when node_modules is missing or older than package-lock.json)
//   3. the TypeScript build (turbo, cached)
//   4. the upstream binaries (release downloads, else built from packages/testbed/upstream, into
//      ~/.cache/switchyard; reused when present)
//   for `test` (and `setup`, which is test's set-up alone), what its suites need besides (scripts/setup-plan.mjs):
//   5. the e2e suite and its programs (e2e.test, agnhost, ginkgo, regression-issue-74839) for the conformance test
//   6. a Docker engine for the container tests (scripts/docker-engine.mjs: the one `docker info` answers, else a
//      private one when root on Linux), its DOCKER_HOST passed to the tests
//   7. the three images (scripts/images.mjs: the engine's layer cache makes it seconds when nothing changed)
//   8. the kind node image: kindest/node at the pinned version when present or pulled, else built here (root on
//      Linux; scripts/kind-node-image.mjs, cached by tag)
//   7 and 8 only for a whole run (`npm test` with no file words): the suites that use them build them themselves.
//   A step of 4-8 that cannot be done here (no Go, no Docker, no root) says so in one line and the run goes on: the
//   suites that need it skip and say why. With SWITCHYARD_NO_SKIP=1 (CI), where a skip fails the run, it stops.
// `npm run images` needs only 0 and the engine: the images are built inside Docker (scripts/images.mjs).
//   0. the project's Node (.node-version): when the running Node is another major line, it is installed into
//      ~/.cache/switchyard/node and this script runs again under it, with its bin directory first on PATH so
//      that npm, npx, turbo and tsx run on it too (scripts/project-node.mjs)
// Plain Node with no dependencies: it must run before `npm ci` has, on the system's Node, whatever it is.
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, statSync } from "node:fs";
import { delimiter, dirname, join } from "node:path";
import { ensureEngine } from "./docker-engine.mjs";
import { buildImages } from "./images.mjs";
import { ensureProjectNode, runningWantedMajor, wantedNodeVersion } from "./project-node.mjs";
import { afterFailure, blockedBy, e2ePrograms, setupPlan } from "./setup-plan.mjs";

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
  // The netns agent execs every container's process through it (lab/src/agent/container-identity.ts).
  setpriv: "util-linux",
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

const toolSets = { lab: labTools, test: testTools, bench: benchTools };

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

// For the steps a run may go on without: the failure is thrown, and the step's line says it.
function attempt(cmd, args) {
  const r = spawnSync(cmd, args, { cwd: root, stdio: "inherit" });
  if (r.status !== 0) throw new Error(`exit ${r.status ?? r.signal}, its output above`);
}

function ensureSystemTools(tools) {
  const missing = [
    ...new Set(
      Object.entries(tools)
        .filter(([cmd]) => !has(cmd))
        .map(([, pkg]) => pkg),
    ),
  ];
  if (missing.length === 0) return "all present";
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
    return "in place";
  console.error("[setup] installing npm dependencies (npm ci)");
  run("npm", ["ci", "--no-audit", "--no-fund", "--loglevel=error"]);
}

function build() {
  run("npx", ["turbo", "run", "build", "--output-logs=errors-only", "--log-prefix=none"]);
}

function upstream(only) {
  const args = only ? ["upstream", "build", "--only", only.join(",")] : ["upstream", "build"];
  attempt(process.execPath, [join(root, "lab", "bin", "switchyard-lab.js"), ...args]);
}

// The engine for the container tests; the tests and the image builds below find it through DOCKER_HOST.
async function dockerEngine() {
  const host = await ensureEngine();
  if (host) process.env.DOCKER_HOST = host;
}

// The node image the kind tests run, found as they find it (lab/src/kind/node-image.ts): kindest/node at the pinned
// version when the engine has it or can pull it, else built here, which needs root on Linux (debootstrap, chroot).
function kindNodeImage() {
  const versions = JSON.parse(
    readFileSync(join(root, "packages", "testbed", "upstream", "versions.json"), "utf8"),
  );
  const pinned = `kindest/node:${versions.kubernetes}`;
  if (spawnSync("docker", ["image", "inspect", pinned], { stdio: "ignore" }).status === 0)
    return `${pinned} present`;
  if (spawnSync("docker", ["pull", "-q", pinned], { stdio: "ignore", timeout: 300_000 }).status === 0)
    return `pulled ${pinned}`;
  if (process.platform !== "linux" || process.getuid?.() !== 0)
    throw new Error(`${pinned} cannot be pulled, and a node image is built here only as root on Linux`);
  attempt(process.execPath, [join(root, "scripts", "kind-node-image.mjs")]);
}

const noSkip = process.env.SWITCHYARD_NO_SKIP === "1";
const failed = new Set();

// One set-up step, ended by `::: <name>: <seconds>s` and what it found. A step the job can go on without that could
// not be done says so on that line; any other failure ends the run.
async function step(name, fn) {
  const started = Date.now();
  const took = () => `${((Date.now() - started) / 1000).toFixed(1)}s`;
  const blocker = blockedBy(name, failed);
  try {
    if (blocker) throw new Error(`it needs the ${blocker}`);
    const found = await fn();
    console.error(`::: ${name}: ${took()}${found ? ` (${found})` : ""}`);
  } catch (err) {
    failed.add(name);
    const line = `::: ${name}: ${took()}, not done here (${err.message.split("\n")[0]})`;
    if (afterFailure(job, name, noSkip) === "go on") {
      console.error(`${line}; the suites that need it skip and say why`);
      return;
    }
    console.error(line);
    if (afterFailure(job, name, false) === "go on")
      console.error("[setup] SWITCHYARD_NO_SKIP=1: the suites that need it would skip, so the run stops");
    process.exit(1);
  }
}

const screenshotsTest = join("lab", "test", "netns", "dashboard.e2e.test.ts");
const plan = setupPlan(job ?? "", jobArgs, { root: process.getuid?.() === 0 });

const jobs = {
  test: () => run(process.execPath, [join(root, "scripts", "test-all.mjs"), ...jobArgs]),
  // The test job's set-up alone: CI runs it before lint and typecheck, which need the build, then `npm test`.
  setup: () => {},
  // The whole lab: control plane, nodes as network namespaces, the stack deployed from its manifests (root).
  // `npm run lab <command> ...` (down, status, scenario ...) runs that command instead (scripts/lab-args.mjs).
  lab: () => run(process.execPath, [join(root, "lab", "bin", "switchyard-lab.js"), ...plan.labArgs]),
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
const steps = {
  "system packages": () => ensureSystemTools(Object.assign({}, ...plan.tools.map((set) => toolSets[set]))),
  "npm dependencies": ensureNpm,
  build,
  "upstream binaries": () => upstream(plan.upstream),
  "e2e programs": () => upstream(e2ePrograms),
  "docker engine": dockerEngine,
  // Not the e2e suite's test images (scripts/images.mjs --e2e): only conformance on kind loads them; the netns
  // conformance test's node agents make those images from the upstream binaries.
  images: () => attempt(process.execPath, [join(root, "scripts", "images.mjs")]),
  "kind node image": kindNodeImage,
};
for (const name of plan.steps) await step(name, steps[name]);
jobs[job]();
