import { accessSync, constants, existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter, join } from "node:path";
import { type BinaryOrigin, parseOrigin } from "./releases.js";
import { readVersions, type UpstreamVersions } from "./versions.js";

/** Which Go module under upstream/ builds each binary, and from which package. */
export interface BinarySpec {
  name: UpstreamBinary;
  module: "kubernetes" | "etcd" | "coredns" | "kind";
  goPackage: string;
  /** A test binary (`go test -c` of the package), not a command. */
  test?: boolean;
}

export type UpstreamBinary =
  | "kube-apiserver"
  | "kube-controller-manager"
  | "kube-scheduler"
  | "kube-proxy"
  | "kubectl"
  | "kubelet"
  | "kubeadm"
  | "etcd"
  | "coredns"
  | "kind"
  | "e2e.test"
  | "agnhost"
  | "ginkgo"
  | "regression-issue-74839";

export const binarySpecs: readonly BinarySpec[] = [
  { name: "kube-apiserver", module: "kubernetes", goPackage: "k8s.io/kubernetes/cmd/kube-apiserver" },
  {
    name: "kube-controller-manager",
    module: "kubernetes",
    goPackage: "k8s.io/kubernetes/cmd/kube-controller-manager",
  },
  { name: "kube-scheduler", module: "kubernetes", goPackage: "k8s.io/kubernetes/cmd/kube-scheduler" },
  { name: "kube-proxy", module: "kubernetes", goPackage: "k8s.io/kubernetes/cmd/kube-proxy" },
  { name: "kubectl", module: "kubernetes", goPackage: "k8s.io/kubernetes/cmd/kubectl" },
  { name: "etcd", module: "etcd", goPackage: "go.etcd.io/etcd/server/v3" },
  { name: "coredns", module: "coredns", goPackage: "github.com/coredns/coredns" },
];

/**
 * Binaries built only when asked for by name (`buildUpstream({ only: ["kind"] })`, which the kind runtime does
 * when kind is missing): a plain `upstream build`, which CI runs, and `upstream where` leave them out.
 */
export const onDemandSpecs: readonly BinarySpec[] = [
  // What a kind node image runs besides the control plane (scripts/kind-node-image.mjs builds them when missing).
  { name: "kubelet", module: "kubernetes", goPackage: "k8s.io/kubernetes/cmd/kubelet" },
  { name: "kubeadm", module: "kubernetes", goPackage: "k8s.io/kubernetes/cmd/kubeadm" },
  { name: "kind", module: "kind", goPackage: "sigs.k8s.io/kind" },
  // Kubernetes' own e2e suite and the program of its test pods, for `switchyard-lab conformance`.
  { name: "e2e.test", module: "kubernetes", goPackage: "k8s.io/kubernetes/test/e2e", test: true },
  { name: "agnhost", module: "kubernetes", goPackage: "k8s.io/kubernetes/test/images/agnhost" },
  // The raw-packet sender of the conntrack spec that checks kube-proxy drops invalid-state packets.
  {
    name: "regression-issue-74839",
    module: "kubernetes",
    goPackage: "k8s.io/kubernetes/test/images/regression-issue-74839",
  },
  // Ginkgo's CLI at the suite's own version, to run its specs in several processes.
  { name: "ginkgo", module: "kubernetes", goPackage: "github.com/onsi/ginkgo/v2/ginkgo" },
];

/** SWITCHYARD_KUBE_APISERVER and friends: one variable per binary. */
export function envVarFor(name: UpstreamBinary): string {
  return `SWITCHYARD_${name.toUpperCase().replaceAll(/[^A-Z0-9]/g, "_")}`;
}

export type Env = Record<string, string | undefined>;

/** Where built binaries are cached: outside git, one folder per Kubernetes version. */
export function cacheBinDir(env: Env = process.env, versions: UpstreamVersions = readVersions()): string {
  if (env.SWITCHYARD_CACHE_DIR) return join(env.SWITCHYARD_CACHE_DIR, versions.kubernetes, "bin");
  const base = env.XDG_CACHE_HOME || join(env.HOME || homedir(), ".cache");
  return join(base, "switchyard", versions.kubernetes, "bin");
}

export interface ResolvedBinary {
  name: UpstreamBinary;
  path: string | undefined;
  /** How it was found, for `switchyard-lab upstream where` and error messages. */
  source: "env" | "bin-dir" | "cache" | "path" | "missing";
  /** For a cached binary, how it got there (its `<name>.origin`); undefined when that was not written down. */
  origin?: BinaryOrigin;
}

/** The `<name>.origin` beside a cached binary, if any. */
function readOrigin(cacheDir: string, name: UpstreamBinary): BinaryOrigin | undefined {
  try {
    return parseOrigin(readFileSync(join(cacheDir, `${name}.origin`), "utf8"));
  } catch {
    return undefined;
  }
}

function isExecutable(path: string): boolean {
  try {
    accessSync(path, constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/**
 * Finds a binary the way a user expects: an explicit per-binary variable wins, then SWITCHYARD_UPSTREAM_BIN (a
 * folder holding official release downloads), then our build cache, then PATH.
 */
export function resolveBinary(
  name: UpstreamBinary,
  env: Env = process.env,
  cacheDir = cacheBinDir(env),
): ResolvedBinary {
  const explicit = env[envVarFor(name)];
  if (explicit)
    return {
      name,
      path: isExecutable(explicit) ? explicit : undefined,
      source: isExecutable(explicit) ? "env" : "missing",
    };
  if (env.SWITCHYARD_UPSTREAM_BIN) {
    const candidate = join(env.SWITCHYARD_UPSTREAM_BIN, name);
    if (isExecutable(candidate)) return { name, path: candidate, source: "bin-dir" };
  }
  const cached = join(cacheDir, name);
  if (isExecutable(cached)) {
    const origin = readOrigin(cacheDir, name);
    return { name, path: cached, source: "cache", ...(origin ? { origin } : {}) };
  }
  for (const dir of (env.PATH ?? "").split(delimiter)) {
    if (!dir) continue;
    const candidate = join(dir, name);
    if (existsSync(candidate) && isExecutable(candidate)) return { name, path: candidate, source: "path" };
  }
  return { name, path: undefined, source: "missing" };
}

export function resolveAll(env: Env = process.env, cacheDir = cacheBinDir(env)): ResolvedBinary[] {
  return binarySpecs.map((spec) => resolveBinary(spec.name, env, cacheDir));
}

/** The one-paragraph answer to "a binary is missing": which ones, and the three ways to get them. */
export function missingBinariesMessage(
  missing: readonly UpstreamBinary[],
  cacheDir: string,
  reason?: string,
): string {
  const versions = readVersions();
  return [
    `missing upstream binaries: ${missing.join(", ")}${reason ? ` (${reason})` : ""}.`,
    "Get them in one of three ways:",
    `  1. npx switchyard-lab upstream build: the official releases where they answer, else built with Go >= 1.26 (into ${cacheDir})`,
    `  2. download the official releases (Kubernetes ${versions.kubernetes}, etcd ${versions.etcd}, CoreDNS ${versions.coredns};`,
    "     see packages/testbed/README.md) into one folder and set SWITCHYARD_UPSTREAM_BIN=<folder>",
    `  3. point at each one: ${missing.map((name) => `${envVarFor(name)}=<path>`).join(" ")} (or put them on PATH)`,
  ].join("\n");
}
