import { execFile } from "node:child_process";
import { accessSync, constants, existsSync, readdirSync, readFileSync, statfsSync } from "node:fs";
import { dirname, join } from "node:path";
import { versionAtLeast } from "@switchyard/kube/node-version";
import { checkPortFree, defaultPorts, defaultStateDir, readState } from "@switchyard/testbed/controlplane";
import {
  cacheBinDir,
  downloadsWanted,
  resolveBinary,
  type UpstreamBinary,
  upstreamDir,
} from "@switchyard/testbed/upstream";
import type { LabRuntime } from "../netns/state.js";
import { readLabRuntime } from "../netns/state.js";
import { repoRoot } from "../self.js";
import { binariesFor, type DoctorFacts, imageTools, netnsTools } from "./checks.js";

const GiB = 2 ** 30;

/** A command's stdout, or its first error line; never longer than `timeoutMs`. */
function run(argv: readonly string[], timeoutMs = 10_000): Promise<{ out: string } | { error: string }> {
  const [bin = "", ...args] = argv;
  return new Promise((resolve) => {
    execFile(bin, args, { encoding: "utf8", timeout: timeoutMs }, (err, stdout, stderr) => {
      if (!err) resolve({ out: stdout });
      else if ((err as NodeJS.ErrnoException).code === "ENOENT") resolve({ error: `${bin} is not on PATH` });
      else resolve({ error: stderr.trim().split("\n")[0] || err.message });
    });
  });
}

function onPath(name: string): boolean {
  return (process.env.PATH ?? "").split(":").some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/**
 * The newest `go` directive among packages/testbed/upstream's modules: the Go the pinned sources build with.
 */
function wantedGo(): string {
  const versions = readdirSync(upstreamDir, { withFileTypes: true })
    .filter((d) => d.isDirectory() && existsSync(join(upstreamDir, d.name, "go.mod")))
    .map((d) => /^go (\S+)$/m.exec(readFileSync(join(upstreamDir, d.name, "go.mod"), "utf8"))?.[1])
    .filter((v): v is string => v !== undefined);
  return versions.reduce((a, b) => (versionAtLeast(a, b) ? a : b), "0");
}

/** The deepest existing folder on the way to `path`: where a folder not made yet will live. */
function existingAncestor(path: string): string {
  let p = path;
  while (!existsSync(p) && dirname(p) !== p) p = dirname(p);
  return p;
}

function freeBytes(path: string): number {
  const s = statfsSync(existingAncestor(path));
  return s.bavail * s.bsize;
}

async function ports(): Promise<DoctorFacts["ports"]> {
  const named = [
    { port: defaultPorts.apiserver, what: "kube-apiserver" },
    { port: defaultPorts.etcdClient, what: "etcd" },
    { port: defaultPorts.etcdPeer, what: "etcd peers" },
    { port: defaultPorts.controllerManager, what: "kube-controller-manager" },
    { port: defaultPorts.scheduler, what: "kube-scheduler" },
  ];
  return Promise.all(
    named.map(({ port, what }) =>
      checkPortFree("127.0.0.1", port).then(
        () => ({ port, what }),
        (err: NodeJS.ErrnoException) => ({ port, what, error: err.code ?? err.message }),
      ),
    ),
  );
}

/** Where space is needed for the runtime: the lab's folder, the cache when binaries must be built, Docker's root. */
async function disk(
  runtime: LabRuntime | undefined,
  stateDir: string,
  building: boolean,
  dockerRoot?: string,
) {
  const out: DoctorFacts["disk"][number][] = [];
  const add = (what: string, path: string, needBytes: number) =>
    out.push({ what, path, freeBytes: freeBytes(path), needBytes });
  if (runtime !== "kind") add("the lab's folder", stateDir, GiB);
  // Go's module and build caches live under the same home as ours: 9.1 GB after a cold build with the e2e suite's
  // binaries, and 873 MB of binaries (docs/quick-start.md, `bash .ci/run` on a clean clone, 2026-12-03).
  if (building) add("the build cache", cacheBinDir(), 10 * GiB);
  if (runtime !== "netns" && dockerRoot && existsSync(dockerRoot)) add("Docker's data", dockerRoot, 2 * GiB);
  return out;
}

/** Everything `doctor` checks, read from this machine. */
export async function gatherFacts(runtime: LabRuntime | undefined, stateDir: string): Promise<DoctorFacts> {
  const wanted = readFileSync(join(repoRoot, ".node-version"), "utf8").trim();
  const go = await run(["go", "version"]);
  const docker = await run(["docker", "info", "--format", "{{.DockerRootDir}}"]);
  const names = [...new Set([...binariesFor.netns, ...binariesFor.kind])] as UpstreamBinary[];
  const binaries = names.map((name) => ({ name, path: resolveBinary(name).path }));
  const building = (runtime ? binariesFor[runtime] : binariesFor.netns).some(
    (n) => !binaries.find((b) => b.name === n)?.path,
  );
  const controlPlane = defaultStateDir();
  return {
    uid: process.getuid?.(),
    node: { running: process.version, wanted },
    go: {
      ...("out" in go ? { found: /go(\d+\.\d+(?:\.\d+)?)/.exec(go.out)?.[1] } : {}),
      wanted: wantedGo(),
    },
    downloads: downloadsWanted(process.env),
    binaries,
    commands: Object.fromEntries(
      [...Object.keys(netnsTools), ...Object.keys(imageTools)].map((t) => [
        t,
        t.startsWith("/") ? existsSync(t) : onPath(t),
      ]),
    ),
    brNetfilter: existsSync("/proc/sys/net/bridge/bridge-nf-call-iptables"),
    ports: await ports(),
    ...(readLabRuntime(stateDir) === "netns" ? { labUp: stateDir } : {}),
    ...(readState(controlPlane) ? { controlPlaneUp: controlPlane } : {}),
    ...("error" in docker ? { dockerError: docker.error } : {}),
    disk: await disk(runtime, stateDir, building, "out" in docker ? docker.out.trim() : undefined),
  };
}
