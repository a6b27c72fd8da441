#!/usr/bin/env node
// `npm run images`: builds switchyard/kube-proxy, switchyard/cluster-dns and switchyard/slice-controller,
// each tagged with its package's version and `dev`, from apps/<app>/Dockerfile with the repository root as
// context, exactly as a user's `docker build` does, after the build stage they share (switchyard/build:dev from
// build.Dockerfile, which each names in `ARG BUILD_IMAGE`). Before that, for each base image a Dockerfile names
// in an `ARG *_IMAGE=<default>` line: the default is used when the engine has it or can pull it; when it can not
// (no registry answers), the local equivalents of scripts/local-base-images.mjs are made (once, then reused) and
// passed as build arguments. Prints each build step, and each image's size at the end.
//   node scripts/images.mjs [kube-proxy] [cluster-dns] [slice-controller] [echo] [loadgen] [--upstream] [--local-bases]
// echo and loadgen are the lab's own workloads (lab/Dockerfile), built only when named.
// --local-bases skips the pull attempt. --upstream builds, instead, upstream's CoreDNS and kube-proxy images
// from packages/testbed/upstream/images/<name>/Dockerfile around the binaries packages/testbed/upstream
// built, tagged switchyard-upstream/<name>:<upstream version>, for comparing sizes (and for the kind
// runtime's upstream stack). Plain Node with no dependencies (it runs before npm ci); only --upstream and --e2e
// read the testbed's build output.
import { spawn, spawnSync } from "node:child_process";
import {
  copyFileSync,
  createWriteStream,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureEngine } from "./docker-engine.mjs";
import { ensureLocalBaseImages, ensureUpstreamBaseImages } from "./local-base-images.mjs";
import { loadTestbedUpstream } from "./testbed-upstream.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const apps = ["kube-proxy", "cluster-dns", "slice-controller"];
// The lab's own workloads (lab/Dockerfile, one target each), for lab clusters on kind; built only when named.
export const labImages = ["echo", "loadgen"];
// Upstream's images: the binary each one wraps and the entry of packages/testbed/upstream/versions.json that
// tags it.
export const upstreamImages = [
  { name: "coredns", binary: "coredns", version: "coredns" },
  { name: "kube-proxy", binary: "kube-proxy", version: "kubernetes" },
];
// The e2e suite's test images this repository can make where they cannot be pulled
// (packages/testbed/upstream/images/e2e-<name>), tagged as the suite asks for them (`e2e.test
// --list-images`); built only with --e2e. Most live under e2e-test-images; the privileged host-network pods
// of the conntrack specs use a build image.
const e2eRegistry = "registry.k8s.io/e2e-test-images";
export const e2eImages = [
  { name: "agnhost", binaries: ["agnhost", "coredns"], registry: e2eRegistry },
  { name: "busybox", binaries: [], registry: e2eRegistry },
  { name: "nginx", binaries: [], registry: e2eRegistry },
  { name: "glibc-dns-testing", binaries: ["coredns"], registry: e2eRegistry },
  { name: "regression-issue-74839", binaries: ["regression-issue-74839"], registry: e2eRegistry },
  { name: "distroless-iptables", binaries: [], registry: "registry.k8s.io/build-image" },
];
// Which local image stands in for which build argument's upstream default (the debootstrap Debian with node
// also serves where a plain Debian is wanted: DEBIAN_IMAGE only runs apt-get and setcap).
const localFor = {
  NODE_IMAGE: "node",
  RUNTIME_IMAGE: "distroless",
  DEBIAN_IMAGE: "node",
  STATIC_IMAGE: "static",
  IPTABLES_IMAGE: "iptables",
};

// The build stage the images share (the repository with its npm dependencies), built before the images whose
// Dockerfile names it in `ARG BUILD_IMAGE`.
const buildStage = {
  name: "build",
  dockerfile: join(root, "build.Dockerfile"),
  context: root,
  tags: ["switchyard/build:dev"],
};

const usesBuildStage = (target) => /^ARG BUILD_IMAGE=/m.test(readFileSync(target.dockerfile, "utf8"));

// What one build needs: its Dockerfile, its context directory and its tags (the first is the one measured).
function appTarget(app) {
  if (labImages.includes(app)) {
    const version = JSON.parse(readFileSync(join(root, "lab", "package.json"), "utf8")).version;
    return {
      name: app,
      dockerfile: join(root, "lab", "Dockerfile"),
      target: app,
      context: root,
      tags: [`switchyard/${app}:dev`, `switchyard/${app}:${version}`],
    };
  }
  const version = JSON.parse(readFileSync(join(root, "apps", app, "package.json"), "utf8")).version;
  return {
    name: app,
    dockerfile: join(root, "apps", app, "Dockerfile"),
    context: root,
    tags: [`switchyard/${app}:dev`, `switchyard/${app}:${version}`],
  };
}

// An upstream image's context is a fresh directory with only its Dockerfile and binary: the cache folder
// holds every upstream binary (~550 MB), which docker would otherwise send whole. The binary is found as
// the lab finds it (@switchyard/testbed/upstream).
async function upstreamTarget(image) {
  const { resolveBinary, readVersions } = await loadTestbedUpstream();
  const binary = resolveBinary(image.binary);
  if (!binary.path)
    throw new Error(`no upstream ${image.binary} binary: run npx switchyard-lab upstream build`);
  const context = mkdtempSync(join(tmpdir(), `switchyard-upstream-${image.name}-`));
  const dockerfile = join(context, "Dockerfile");
  copyFileSync(join(root, "packages", "testbed", "upstream", "images", image.name, "Dockerfile"), dockerfile);
  copyFileSync(binary.path, join(context, image.binary));
  return {
    name: `upstream ${image.name}`,
    dockerfile,
    context,
    tags: [`switchyard-upstream/${image.name}:${readVersions()[image.version]}`],
    cleanup: () => rmSync(context, { recursive: true, force: true }),
  };
}

// The references the pinned e2e suite runs for one of its images (nginx has two tags), from its own list.
function e2eRefs(e2eTest, registry, name) {
  const list = spawnSync(e2eTest, ["--list-images"], { encoding: "utf8" });
  if (list.status !== 0)
    throw new Error(`${e2eTest} --list-images failed: ${list.stderr.trim().split("\n").pop()}`);
  const prefix = `${registry}/${name}:`;
  return list.stdout.split("\n").filter((l) => l.startsWith(prefix));
}

// An e2e image's context: its Dockerfile and the binaries it wraps, found as the lab finds them.
async function e2eTarget(image) {
  const { resolveBinary } = await loadTestbedUpstream();
  const e2eTest = resolveBinary("e2e.test").path;
  if (!e2eTest) throw new Error("no e2e.test: run npx switchyard-lab upstream build --only e2e.test,agnhost");
  const context = mkdtempSync(join(tmpdir(), `switchyard-e2e-${image.name}-`));
  const dockerfile = join(context, "Dockerfile");
  copyFileSync(
    join(root, "packages", "testbed", "upstream", "images", `e2e-${image.name}`, "Dockerfile"),
    dockerfile,
  );
  for (const name of image.binaries) {
    const binary = resolveBinary(name).path;
    if (!binary)
      throw new Error(`no upstream ${name} binary: run npx switchyard-lab upstream build --only ${name}`);
    copyFileSync(binary, join(context, name));
  }
  const tags = e2eRefs(e2eTest, image.registry, image.name);
  if (tags.length === 0) throw new Error(`${e2eTest} --list-images names no ${image.name} image`);
  return {
    name: `e2e ${image.name}`,
    dockerfile,
    context,
    tags,
    cleanup: () => rmSync(context, { recursive: true, force: true }),
  };
}

function say(line) {
  console.error(`[images] ${line}`);
}

function seconds(since) {
  return `${((Date.now() - since) / 1000).toFixed(1)}s`;
}

// The base images a Dockerfile pulls; BUILD_IMAGE is not one of them: it is built here, first.
function baseArgs(target) {
  const text = readFileSync(target.dockerfile, "utf8");
  return [...text.matchAll(/^ARG (\w+_IMAGE)=(\S+)$/gm)]
    .map((m) => ({ name: m[1], image: m[2] }))
    .filter((arg) => arg.name !== "BUILD_IMAGE");
}

function haveOrPull(image) {
  if (spawnSync("docker", ["image", "inspect", image], { stdio: "ignore" }).status === 0) return true;
  say(`pulling ${image}`);
  const pull = spawnSync("docker", ["pull", "-q", image], { encoding: "utf8", timeout: 300_000 });
  if (pull.status === 0) return true;
  say(`cannot pull ${image}: ${(pull.stderr || pull.error?.message || "").trim().split("\n").pop()}`);
  return false;
}

// Build argument -> local image, for every base image that has to be replaced by a local one.
function resolveBases(targets, forceLocal) {
  const pulled = new Map();
  const needLocal = new Set();
  for (const target of targets)
    for (const arg of baseArgs(target)) {
      if (!localFor[arg.name])
        throw new Error(`${target.dockerfile}: no local equivalent for ARG ${arg.name}`);
      if (!pulled.has(arg.image)) pulled.set(arg.image, !forceLocal && haveOrPull(arg.image));
      if (!pulled.get(arg.image)) needLocal.add(arg.name);
    }
  if (needLocal.size === 0) return new Map();
  const kinds = new Set([...needLocal].map((name) => localFor[name]));
  const tags = {
    ...(kinds.has("node") || kinds.has("distroless") ? ensureLocalBaseImages() : {}),
    ...(kinds.has("static") || kinds.has("iptables") ? ensureUpstreamBaseImages() : {}),
  };
  return new Map([...needLocal].map((name) => [name, tags[localFor[name]]]));
}

// The certificates this host added to its trust store (Debian's place for local CAs). Where the network
// intercepts TLS, npm ci inside the build trusts only these besides its own, through EXTRA_CA_CERTS. The
// whole system bundle would not fit: one argument may be at most 128 KiB on Linux.
function localCaCerts(dir = "/usr/local/share/ca-certificates") {
  if (!existsSync(dir)) return "";
  return readdirSync(dir, { recursive: true })
    .filter((f) => String(f).endsWith(".crt"))
    .sort()
    .map((f) => readFileSync(join(dir, String(f)), "utf8").trim())
    .join("\n");
}

// The --build-arg flags of one app: only the arguments its Dockerfile declares.
function buildArgsFor(target, local, caCerts) {
  const args = baseArgs(target)
    .filter((arg) => local.has(arg.name))
    .flatMap((arg) => ["--build-arg", `${arg.name}=${local.get(arg.name)}`]);
  const declaresCa = /^ARG EXTRA_CA_CERTS=/m.test(readFileSync(target.dockerfile, "utf8"));
  if (caCerts && declaresCa) args.push("--build-arg", `EXTRA_CA_CERTS=${caCerts}`);
  return args;
}

// Runs one docker build; its step lines go to the terminal, everything to a log file.
function build(target, buildArgs) {
  const app = target.name;
  const log = join(tmpdir(), `switchyard-image-${app.replace(" ", "-")}.log`);
  const args = [
    "build",
    "--network",
    "host",
    "-f",
    target.dockerfile,
    ...(target.target ? ["--target", target.target] : []),
  ];
  args.push(...target.tags.flatMap((t) => ["-t", t]), ...buildArgs, target.context);
  const shown = args.map((a) => (a.startsWith("EXTRA_CA_CERTS=") ? "EXTRA_CA_CERTS=<PEM>" : a));
  say(`${app}: docker ${shown.join(" ")} (log: ${log})`);
  const out = createWriteStream(log);
  return new Promise((resolve, reject) => {
    const child = spawn("docker", args, { cwd: target.context, stdio: ["ignore", "pipe", "pipe"] });
    let partial = "";
    const tail = [];
    const onData = (chunk) => {
      out.write(chunk);
      const lines = (partial + chunk.toString()).split("\n");
      partial = lines.pop();
      for (const line of lines) {
        tail.push(line);
        if (tail.length > 30) tail.shift();
        // The steps that take time, FROM and RUN: the classic builder's "Step 3/20 : RUN ...", BuildKit's
        // "#7 [build 3/9] RUN ..."; the many COPY steps would only bury them.
        if (/^(Step \d+\/\d+ :|#\d+ \[[^\]]+\d+\/\d+\]) (FROM|RUN)\b/.test(line))
          say(`${app}: ${line.slice(0, 150)}`);
      }
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    child.on("close", (code) => {
      out.end();
      if (code === 0) resolve();
      else reject(new Error(`docker build of ${app} failed (exit ${code}); last lines:\n${tail.join("\n")}`));
    });
  });
}

function sizeOf(image) {
  const r = spawnSync("docker", ["image", "inspect", "--format", "{{.Size}}", image], { encoding: "utf8" });
  return Number(r.stdout.trim());
}

// Builds the apps named in `selected` and, with `upstream`, upstream's images; returns what was built.
export async function buildImages(
  selected = apps,
  { forceLocal = false, upstream = false, e2e = false } = {},
) {
  const started = Date.now();
  const host = await ensureEngine();
  if (host) process.env.DOCKER_HOST = host;
  const targets = selected.map(appTarget);
  if (targets.some(usesBuildStage)) targets.unshift(buildStage);
  if (upstream) for (const image of upstreamImages) targets.push(await upstreamTarget(image));
  if (e2e) for (const image of e2eImages) targets.push(await e2eTarget(image));
  const done = [];
  try {
    const local = resolveBases(targets, forceLocal);
    const caCerts = localCaCerts();
    if (caCerts)
      say("passing this host's /usr/local/share/ca-certificates to npm ci in the builds (EXTRA_CA_CERTS)");
    for (const target of targets) {
      const t = Date.now();
      await build(target, buildArgsFor(target, local, caCerts));
      done.push({ tags: target.tags, size: sizeOf(target.tags[0]), time: seconds(t) });
    }
    say(
      `built ${done.length} image(s) in ${seconds(started)}${local.size ? ` on local bases (${[...new Set(local.values())].join(", ")})` : ""}`,
    );
  } finally {
    for (const target of targets) target.cleanup?.();
  }
  for (const d of done)
    console.log(
      `${d.tags.join(", ").padEnd(52)} ${(d.size / 1e6).toFixed(1).padStart(7)} MB  built in ${d.time}`,
    );
  return done;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const words = process.argv.slice(2);
  const flags = ["--local-bases", "--upstream", "--e2e"];
  const known = [...apps, ...labImages];
  const unknown = words.filter((w) => !flags.includes(w) && !known.includes(w));
  if (unknown.length > 0) {
    console.error(
      `usage: node scripts/images.mjs [${known.join("] [")}] [--upstream] [--e2e] [--local-bases] (unknown: ${unknown.join(" ")})`,
    );
    process.exit(2);
  }
  const selected = known.filter((a) => words.includes(a));
  const upstream = words.includes("--upstream");
  const e2e = words.includes("--e2e");
  try {
    // --upstream or --e2e alone builds only those images; app names add ours.
    await buildImages(selected.length || upstream || e2e ? selected : apps, {
      forceLocal: words.includes("--local-bases"),
      upstream,
      e2e,
    });
  } catch (err) {
    say(err.message);
    process.exit(1);
  }
}
