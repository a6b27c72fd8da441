#!/usr/bin/env node
// `npm run images`: builds switchyard/kube-proxy, switchyard/cluster-dns and switchyard/slice-controller,
// each tagged with its package's version and `dev`, from apps/<app>/Dockerfile with the repository root as
// context, exactly as a user's `docker build` does. Before that, for each base image a Dockerfile names in an
// `ARG *_IMAGE=<default>` line: the default is used when the engine has it or can pull it; when it can not (no
// registry answers), the local equivalents of scripts/local-base-images.mjs are made (once, then reused) and
// passed as build arguments. Prints each build step, and each image's size at the end.
//   node scripts/images.mjs [kube-proxy] [cluster-dns] [slice-controller] [--local-bases]
// --local-bases skips the pull attempt. Plain Node with no dependencies (it runs before npm ci).
import { spawn, spawnSync } from "node:child_process";
import { createWriteStream, existsSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { ensureEngine } from "./docker-engine.mjs";
import { ensureLocalBaseImages } from "./local-base-images.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
export const apps = ["kube-proxy", "cluster-dns", "slice-controller"];
// Which local image stands in for which build argument's upstream default.
const localFor = { NODE_IMAGE: "node", RUNTIME_IMAGE: "distroless" };

function say(line) {
  console.error(`[images] ${line}`);
}

function seconds(since) {
  return `${((Date.now() - since) / 1000).toFixed(1)}s`;
}

function baseArgs(app) {
  const text = readFileSync(join(root, "apps", app, "Dockerfile"), "utf8");
  return [...text.matchAll(/^ARG (\w+_IMAGE)=(\S+)$/gm)].map((m) => ({ name: m[1], image: m[2] }));
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
function resolveBases(selected, forceLocal) {
  const pulled = new Map();
  const needLocal = new Set();
  for (const app of selected)
    for (const arg of baseArgs(app)) {
      if (!localFor[arg.name])
        throw new Error(`apps/${app}/Dockerfile: no local equivalent for ARG ${arg.name}`);
      if (!pulled.has(arg.image)) pulled.set(arg.image, !forceLocal && haveOrPull(arg.image));
      if (!pulled.get(arg.image)) needLocal.add(arg.name);
    }
  if (needLocal.size === 0) return new Map();
  const tags = ensureLocalBaseImages();
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
function buildArgsFor(app, local, caCerts) {
  const args = baseArgs(app)
    .filter((arg) => local.has(arg.name))
    .flatMap((arg) => ["--build-arg", `${arg.name}=${local.get(arg.name)}`]);
  const declaresCa = /^ARG EXTRA_CA_CERTS=/m.test(
    readFileSync(join(root, "apps", app, "Dockerfile"), "utf8"),
  );
  if (caCerts && declaresCa) args.push("--build-arg", `EXTRA_CA_CERTS=${caCerts}`);
  return args;
}

// Runs one docker build; its step lines go to the terminal, everything to a log file.
function build(app, version, buildArgs) {
  const log = join(tmpdir(), `switchyard-image-${app}.log`);
  const args = ["build", "--network", "host", "-f", `apps/${app}/Dockerfile`];
  args.push("-t", `switchyard/${app}:${version}`, "-t", `switchyard/${app}:dev`, ...buildArgs, ".");
  const shown = args.map((a) => (a.startsWith("EXTRA_CA_CERTS=") ? "EXTRA_CA_CERTS=<PEM>" : a));
  say(`${app}: docker ${shown.join(" ")} (log: ${log})`);
  const out = createWriteStream(log);
  return new Promise((resolve, reject) => {
    const child = spawn("docker", args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] });
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

export async function buildImages(selected = apps, { forceLocal = false } = {}) {
  const started = Date.now();
  const host = await ensureEngine();
  if (host) process.env.DOCKER_HOST = host;
  const local = resolveBases(selected, forceLocal);
  const caCerts = localCaCerts();
  if (caCerts)
    say("passing this host's /usr/local/share/ca-certificates to npm ci in the builds (EXTRA_CA_CERTS)");
  const done = [];
  for (const app of selected) {
    const version = JSON.parse(readFileSync(join(root, "apps", app, "package.json"), "utf8")).version;
    const t = Date.now();
    await build(app, version, buildArgsFor(app, local, caCerts));
    done.push({
      image: `switchyard/${app}`,
      tags: `${version}, dev`,
      size: sizeOf(`switchyard/${app}:dev`),
      time: seconds(t),
    });
  }
  say(
    `built ${done.length} image(s) in ${seconds(started)}${local.size ? ` on local bases (${[...new Set(local.values())].join(", ")})` : ""}`,
  );
  for (const d of done)
    console.log(
      `${d.image.padEnd(30)} ${d.tags.padEnd(12)} ${(d.size / 1e6).toFixed(1).padStart(7)} MB  built in ${d.time}`,
    );
  return done;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const words = process.argv.slice(2);
  const unknown = words.filter((w) => w !== "--local-bases" && !apps.includes(w));
  if (unknown.length > 0) {
    console.error(
      `usage: node scripts/images.mjs [${apps.join("] [")}] [--local-bases] (unknown: ${unknown.join(" ")})`,
    );
    process.exit(2);
  }
  const selected = apps.filter((a) => words.includes(a));
  try {
    await buildImages(selected.length ? selected : apps, { forceLocal: words.includes("--local-bases") });
  } catch (err) {
    say(err.message);
    process.exit(1);
  }
}
