// The first lab on a machine that can reach the release binaries (issue 37's goal: Ready within 3 min of
// `npm run lab`, npm ci aside), with the releases simulated by a local mirror of this machine's own upstream
// binaries (@switchyard/testbed/upstream's layOutMirror and serveMirror, the official layout and checksums):
// an empty cache filled by `switchyard-lab upstream build` from the mirror, then `switchyard-lab up` on the netns
// runtime with Switchyard's stack, to Ready. Both are the CLI as `npm run lab` runs it, in child processes.
// Prints each phase's time and writes bench/results/first-lab.md.
//
//   npm run bench -- first-lab [--phase download]
//
// --phase download stops after the download (no root needed). The whole run needs root, the apps built
// (npx turbo run build) and the upstream binaries in the cache (switchyard-lab upstream build), which the mirror is
// made from. The source build it replaces is not run here (a cold one takes 13-21 minutes); its figure is a dated
// measurement, below.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { freeControlPlanePorts } from "@switchyard/testbed/controlplane";
import {
  binarySpecs,
  envVarFor,
  layOutMirror,
  readVersions,
  resolveBinary,
  serveMirror,
  type UpstreamBinary,
} from "@switchyard/testbed/upstream";
import { machineLine } from "./machine.js";

const argv = process.argv.slice(2);
const phaseAt = argv.indexOf("--phase");
const onlyDownload = phaseAt >= 0 && argv[phaseAt + 1] === "download";
if (phaseAt >= 0 && !onlyDownload) throw new Error("--phase: only `download` is known");

/**
 * The anchor: a cold source build of the same seven binaries (empty Go caches), the "upstream binaries" phase of a
 * clean-clone CI run on the project's two shared cores, 2026-12-02 (docs/setup.md). Not run here: timing one binary
 * from source with Go's caches warm would time a link, not what a first machine waits for, and a cold one takes
 * 13-21 minutes.
 */
const SOURCE_BUILD_ANCHOR = { seconds: 795, when: "2026-12-02", how: "a clean-clone CI run, docs/setup.md" };

// Its own prefix and networks, apart from the e2e tests' labs, dns-roll's and the default one.
const labFlags = [
  "--runtime",
  "netns",
  "--prefix",
  "flab",
  "--node-cidr",
  "198.18.56.0/24",
  "--cluster-cidr",
  "10.237.0.0/16",
];
const cli = join(import.meta.dirname, "..", "lab", "bin", "switchyard-lab.js");

/** Runs the lab's CLI with env, its output on this terminal; resolves when it exits 0. */
function switchyardLab(args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((done, fail) => {
    // Not spawnSync: the mirror answers from this process, whose event loop must keep running.
    const child = spawn(process.execPath, [cli, ...args], { env, stdio: "inherit" });
    child.on("error", fail);
    child.on("close", (code) =>
      code === 0 ? done() : fail(new Error(`switchyard-lab ${args.join(" ")}: exit ${code}`)),
    );
  });
}

/** This process's environment with nothing that would find a binary outside the given cache. */
function firstMachineEnv(cache: string, mirrorEnv: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, SWITCHYARD_CACHE_DIR: cache, ...mirrorEnv };
  for (const spec of binarySpecs) delete env[envVarFor(spec.name)];
  delete env.SWITCHYARD_UPSTREAM_BIN;
  delete env.SWITCHYARD_RELEASES;
  return env;
}

async function timed(what: string, fn: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await fn();
  const seconds = (performance.now() - started) / 1000;
  process.stderr.write(`[bench first-lab] ${what}: ${seconds.toFixed(1)} s\n`);
  return seconds;
}

async function main(): Promise<void> {
  const versions = readVersions();
  const names = binarySpecs.map((s) => s.name);
  const sources = names.map((name) => resolveBinary(name));
  const missing = sources.filter((b) => !b.path || b.source === "path").map((b) => b.name);
  if (missing.length > 0)
    throw new Error(
      `the mirror is made from this machine's binaries; missing ${missing.join(", ")}: run switchyard-lab upstream build`,
    );
  const work = mkdtempSync(join(tmpdir(), "switchyard-first-lab-"));
  const root = join(work, "mirror");
  const cache = join(work, "cache");
  const stateDir = join(work, "lab");
  mkdirSync(root);
  const started = new Date();
  const load = loadavg()[0]?.toFixed(1);
  let mirror: Awaited<ReturnType<typeof serveMirror>> | undefined;
  let labStarted = false;
  try {
    const mirrorSeconds = await timed("mirror laid out (not part of the first lab)", async () => {
      await layOutMirror(Object.fromEntries(sources.map((b) => [b.name, b.path as string])), root);
    });
    mirror = await serveMirror(root);
    const env = firstMachineEnv(cache, mirror.env);
    const download = await timed("upstream build from the mirror into an empty cache", () =>
      switchyardLab(["upstream", "build"], env),
    );
    const notMirrored = names.filter((name: UpstreamBinary) => {
      const origin = resolveBinary(name, env).origin;
      return origin?.kind !== "release" || !origin.url.startsWith(`${mirror?.url}/`);
    });
    if (notMirrored.length > 0) throw new Error(`not downloaded from the mirror: ${notMirrored.join(", ")}`);
    let up = Number.NaN;
    if (!onlyDownload) {
      const ports = await freeControlPlanePorts();
      const portFlags = [
        ["--apiserver-port", ports.apiserver],
        ["--etcd-port", ports.etcdClient],
        ["--etcd-peer-port", ports.etcdPeer],
        ["--controller-manager-port", ports.controllerManager],
        ["--scheduler-port", ports.scheduler],
      ].flatMap(([flag, port]) => [String(flag), String(port)]);
      labStarted = true;
      up = await timed("switchyard-lab up to Ready", () =>
        switchyardLab(["up", ...labFlags, ...portFlags, "--state-dir", stateDir], env),
      );
    }
    const anchor = `${SOURCE_BUILD_ANCHOR.seconds} s (${SOURCE_BUILD_ANCHOR.when}, ${SOURCE_BUILD_ANCHOR.how})`;
    const row = (what: string, s: number) =>
      `| ${what} | ${Number.isNaN(s) ? "not run (--phase download)" : `${s.toFixed(1)} s`} |`;
    const out = [
      "# First lab with the release binaries from a mirror",
      "",
      `${machineLine()}; load average ${load} at the start`,
      "",
      `\`npm run bench -- first-lab${onlyDownload ? " --phase download" : ""}\`, ${started.toISOString()}: Kubernetes ${versions.kubernetes}, etcd ${versions.etcd}, CoreDNS ${versions.coredns}`,
      "from a local mirror of this machine's binaries on 127.0.0.1 (the official layout and checksums), into an empty",
      "cache; then a 3-node netns lab in 2 zones, Switchyard's stack, kube-proxy in iptables mode. npm ci and the",
      "TypeScript build are not counted.",
      "",
      "| phase | time |",
      "|---|---|",
      row("`switchyard-lab upstream build`: 7 binaries downloaded, checked, unpacked", download),
      row("`switchyard-lab up` to Ready", up),
      row("the first lab (both)", download + up),
      `| anchor: a cold source build of the same binaries | ${anchor} |`,
      "",
      "The goal: Ready within 180 s of `npm run lab` on a machine that reaches the releases, npm ci aside.",
      `Laying out the mirror (hard links, etcd's and CoreDNS's tarballs, checksums) took ${mirrorSeconds.toFixed(1)} s, not counted.`,
      "",
    ].join("\n");
    console.log(out);
    if (!onlyDownload) {
      const file = join(import.meta.dirname, "results", "first-lab.md");
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, out);
    }
  } finally {
    if (labStarted)
      await switchyardLab(["down", "--state-dir", stateDir], process.env).catch((e: Error) =>
        console.error(`lab down: ${e.message}`),
      );
    await mirror?.close();
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
