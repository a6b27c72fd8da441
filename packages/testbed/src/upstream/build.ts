import { spawn } from "node:child_process";
import { mkdirSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { formatTime } from "@switchyard/kube";
import { Progress, type ProgressSink } from "../progress.js";
import { writeFileAtomic } from "../write-file.js";
import {
  type BinarySpec,
  binarySpecs,
  cacheBinDir,
  type Env,
  onDemandSpecs,
  resolveBinary,
  type UpstreamBinary,
} from "./binaries.js";
import { type DownloadDeps, downloadReleases, httpNet, tarExtract } from "./download.js";
import { downloadsWanted, formatOrigin, goPlatform, type ReleaseAsset, releaseAsset } from "./releases.js";
import { majorMinor, readVersions, upstreamDir } from "./versions.js";

export interface BuildOptions {
  env?: Env;
  /** Build these even if a usable binary is already present. */
  force?: boolean;
  only?: readonly UpstreamBinary[];
  out?: ProgressSink;
  /** The network and tar the release downloads use (tests point them at a local server). */
  download?: DownloadDeps;
  /** The source build of what no release gave (tests replace it with a fake). */
  sourceBuild?: (specs: readonly BinarySpec[], binDir: string, env: Env, out: ProgressSink) => Promise<void>;
}

export interface BuildResult {
  /** Built from source. */
  built: UpstreamBinary[];
  /** Official release binaries downloaded and checked against their published SHA-256. */
  downloaded: UpstreamBinary[];
  /** Already there, left as they were. */
  skipped: UpstreamBinary[];
  binDir: string;
  seconds: number;
}

/** The -ldflags that make `kube-apiserver --version` print the real release instead of v0.0.0-master. */
export function kubernetesLdflags(version: string, buildDate: string): string {
  const { major, minor } = majorMinor(version);
  const stamp = (pkg: string) => [
    `-X ${pkg}.gitVersion=${version}`,
    `-X ${pkg}.gitMajor=${major}`,
    `-X ${pkg}.gitMinor=${minor}`,
    `-X ${pkg}.gitTreeState=clean`,
    `-X ${pkg}.buildDate=${buildDate}`,
  ];
  return [
    "-s",
    "-w",
    ...stamp("k8s.io/component-base/version"),
    ...stamp("k8s.io/client-go/pkg/version"),
  ].join(" ");
}

function goEnv(env: Env): NodeJS.ProcessEnv {
  // GOTOOLCHAIN=local: never let a go.mod toolchain line download another Go; the pinned versions build with 1.26.
  return { ...process.env, ...env, GOTOOLCHAIN: "local", CGO_ENABLED: "0", GOFLAGS: "-buildvcs=false" };
}

function run(
  cmd: string,
  args: string[],
  cwd: string,
  env: Env,
  onLine?: (line: string) => void,
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd, env: goEnv(env), stdio: ["ignore", "pipe", "pipe"] });
    let stdout = "";
    let tail: string[] = [];
    const feed = (chunk: Buffer) => {
      for (const line of chunk.toString().split("\n")) {
        if (!line) continue;
        tail = [...tail.slice(-30), line];
        onLine?.(line);
      }
    };
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on("data", feed);
    child.on("error", (err) => reject(new Error(`${cmd}: ${err.message}`)));
    child.on("close", (code) => {
      if (code === 0) resolve(stdout);
      else
        reject(
          new Error(
            `${cmd} ${args.slice(0, 2).join(" ")} failed in ${cwd} (exit ${code}):\n${tail.join("\n")}`,
          ),
        );
    });
  });
}

export async function goAvailable(env: Env = process.env): Promise<boolean> {
  try {
    await run("go", ["version"], upstreamDir, env);
    return true;
  } catch {
    return false;
  }
}

/** Compiles one Go module's binaries into binDir, printing "compiled N/M packages" as it goes. */
async function buildModule(
  module: BinarySpec["module"],
  specs: readonly BinarySpec[],
  binDir: string,
  env: Env,
  out: ProgressSink,
): Promise<void> {
  const versions = readVersions();
  const cwd = join(upstreamDir, module);
  const progress = new Progress(`upstream ${module}`, out);
  progress.update("downloading Go modules", true);
  await run("go", ["mod", "download"], cwd, env);
  const packages = specs.map((s) => s.goPackage);
  // A test binary links its package's test imports too (-test); their variants compiled for the test ("p [p.test]")
  // and the generated main are left out, since `go build -v` below prints plain package paths.
  const testing = specs.some((s) => s.test) ? ["-test"] : [];
  const deps = await run(
    "go",
    ["list", "-deps", ...testing, "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ...packages],
    cwd,
    env,
  );
  const depList = [...new Set(deps.split("\n").filter((p) => p && !p.includes(" ") && !p.endsWith(".test")))];
  const total = depList.length;
  let compiled = 0;
  const ldflags =
    module === "kubernetes" ? kubernetesLdflags(versions.kubernetes, formatTime(Date.now())) : "-s -w";
  // Build into a staging folder, then move: an interrupted build never leaves a half-written binary in the cache.
  const staging = join(binDir, `.staging-${module}-${process.pid}`);
  mkdirSync(staging, { recursive: true });
  try {
    progress.update(`compiling ${specs.map((s) => s.name).join(", ")}: 0/${total} packages`, true);
    const onLine = (line: string) => {
      if (/^[\w.-]+(\/[\w.@~+-]+)*$/.test(line)) {
        compiled++;
        progress.update(
          `compiling: ${Math.min(compiled, total)}/${total} packages (${Math.floor((100 * Math.min(compiled, total)) / total)}%)`,
        );
      }
    };
    const commands = specs.filter((s) => !s.test);
    if (commands.length > 0) {
      // One package: name the output file; several: let go name each after its command folder.
      const output = commands.length === 1 && commands[0] ? join(staging, commands[0].name) : `${staging}/`;
      const args = ["build", "-v", "-trimpath", "-ldflags", ldflags, "-o", output];
      await run("go", [...args, ...commands.map((s) => s.goPackage)], cwd, env, onLine);
    }
    // A test binary is one package's `go test -c`, one at a time (go refuses -c with several packages and -o). Its
    // dependencies are compiled first with `go build -v`, which names each package (go test -c names none).
    if (testing.length > 0) await run("go", ["build", "-v", "-trimpath", ...depList], cwd, env, onLine);
    for (const spec of specs.filter((s) => s.test)) {
      const args = ["test", "-c", "-v", "-trimpath", "-ldflags", ldflags, "-o", join(staging, spec.name)];
      await run("go", [...args, spec.goPackage], cwd, env, onLine);
    }
    for (const spec of specs) renameSync(join(staging, spec.name), join(binDir, spec.name));
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  progress.done(`built ${specs.map((s) => s.name).join(", ")}`);
}

/** The Go source build of specs into binDir, one module at a time; it needs Go on PATH. */
async function sourceBuild(
  specs: readonly BinarySpec[],
  binDir: string,
  env: Env,
  out: ProgressSink,
): Promise<void> {
  if (!(await goAvailable(env))) {
    const { missingBinariesMessage } = await import("./binaries.js");
    throw new Error(
      missingBinariesMessage(
        specs.map((s) => s.name),
        binDir,
        "no Go toolchain on PATH to build them",
      ),
    );
  }
  for (const module of ["etcd", "kubernetes", "coredns", "kind"] as const) {
    const group = specs.filter((s) => s.module === module);
    if (group.length > 0) await buildModule(module, group, binDir, env, out);
  }
}

/**
 * Gets whatever is missing (or everything with force) into the cache: first the official release binaries for
 * this OS and CPU, checked against their published SHA-256; what no release gave (none published, no answer, a
 * wrong checksum) is built from the Go modules under upstream/. A binary already in the cache is used as it is,
 * with no download tried. Each binary gets a `<name>.origin` beside it for `upstream where`.
 */
export async function buildUpstream(options: BuildOptions = {}): Promise<BuildResult> {
  const env = options.env ?? process.env;
  const out = options.out ?? process.stderr;
  const started = Date.now();
  const binDir = cacheBinDir(env);
  const wanted = options.only
    ? [...binarySpecs, ...onDemandSpecs].filter((s) => options.only?.includes(s.name))
    : binarySpecs;
  // A binary found only on PATH may be any version: building is what was asked, so build the pinned one.
  const todo = wanted.filter(
    (s) => options.force || ["missing", "path"].includes(resolveBinary(s.name, env, binDir).source),
  );
  const skipped = wanted.filter((s) => !todo.includes(s)).map((s) => s.name);
  const downloaded: UpstreamBinary[] = [];
  const failures: string[] = [];
  const platform = goPlatform(process.platform, process.arch);
  const assets =
    platform && downloadsWanted(env)
      ? todo
          .map((s) => releaseAsset(s.name, readVersions(), platform, env))
          .filter((a): a is ReleaseAsset => a !== undefined)
      : [];
  if (assets.length > 0) {
    const progress = new Progress("upstream releases", out);
    progress.update(`downloading ${assets.map((a) => a.name).join(", ")}`, true);
    const outcomes = await downloadReleases(
      assets,
      binDir,
      options.download ?? { net: httpNet(), extract: tarExtract },
    );
    for (const o of outcomes) {
      if (o.ok) downloaded.push(o.name);
      else failures.push(o.reason);
    }
    const failed = outcomes.filter((o) => !o.ok).map((o) => o.name);
    const reasons = [...new Set(failures)];
    progress.done(
      [
        downloaded.length > 0 ? `downloaded ${downloaded.join(", ")}` : "downloaded nothing",
        failed.length > 0 ? `; building ${failed.join(", ")} from source (${reasons.join("; ")})` : "",
      ].join(""),
    );
  }
  const fromSource = todo.filter((s) => !downloaded.includes(s.name));
  if (fromSource.length > 0) {
    mkdirSync(binDir, { recursive: true });
    await (options.sourceBuild ?? sourceBuild)(fromSource, binDir, env, out);
    for (const s of fromSource)
      writeFileAtomic(join(binDir, `${s.name}.origin`), formatOrigin({ kind: "source" }));
  }
  return {
    built: fromSource.map((s) => s.name),
    downloaded,
    skipped,
    binDir,
    seconds: (Date.now() - started) / 1000,
  };
}
