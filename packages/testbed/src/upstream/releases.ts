// Where the official release of each upstream binary is published, and how its SHA-256 is read: the pure half of
// "release binaries first, source build as the fallback" (download.ts does the fetching and writing).
import type { Env, UpstreamBinary } from "./binaries.js";
import type { UpstreamVersions } from "./versions.js";

/** The three places releases come from; each has its own mirror variable. */
export type ReleaseOrigin = "kubernetes" | "etcd" | "coredns";

/** Base URLs that replace the official ones, so a local mirror (or a test's HTTP server) can serve the files. */
export const MIRROR_VARS: Record<ReleaseOrigin, string> = {
  kubernetes: "SWITCHYARD_K8S_RELEASES",
  etcd: "SWITCHYARD_ETCD_RELEASES",
  coredns: "SWITCHYARD_COREDNS_RELEASES",
};

/** Set to "off" to skip downloads and build from source straight away. */
export const RELEASES_SWITCH = "SWITCHYARD_RELEASES";

/**
 * The official bases. Kubernetes: dl.k8s.io/release/<v>/bin/<os>/<arch>/<name> with <name>.sha256 beside it (the
 * kubectl install page's URLs); etcd and CoreDNS: their GitHub releases (etcd's scripts/release.sh names the
 * tarballs and writes SHA256SUMS; CoreDNS's Makefile.release names coredns_<version>_<os>_<arch>.tgz and its
 * .sha256).
 */
const OFFICIAL: Record<ReleaseOrigin, string> = {
  kubernetes: "https://dl.k8s.io/release",
  etcd: "https://github.com/etcd-io/etcd/releases/download",
  coredns: "https://github.com/coredns/coredns/releases/download",
};

export interface Platform {
  os: "linux" | "darwin";
  arch: "amd64" | "arm64";
}

/** Go's names for Node's platform and CPU, or undefined where no release is published for them. */
export function goPlatform(platform: string, arch: string): Platform | undefined {
  const os = platform === "linux" || platform === "darwin" ? platform : undefined;
  const goArch = arch === "x64" ? "amd64" : arch === "arm64" ? "arm64" : undefined;
  return os && goArch ? { os, arch: goArch } : undefined;
}

/** One file to download: a bare binary, or an archive holding the binary at `entry`. */
export interface ReleaseAsset {
  name: UpstreamBinary;
  origin: ReleaseOrigin;
  url: string;
  /** Where the published SHA-256 is. */
  checksumUrl: string;
  /** The file name to look for in a checksum file listing several (etcd's SHA256SUMS). */
  checksumName: string;
  /** The binary's path inside the archive; undefined for a bare binary. */
  entry?: string;
}

function base(origin: ReleaseOrigin, env: Env): string {
  return (env[MIRROR_VARS[origin]] || OFFICIAL[origin]).replace(/\/+$/, "");
}

/** Kubernetes' binaries published one by one under bin/<os>/<arch>/. */
const KUBE_BINARIES: readonly UpstreamBinary[] = [
  "kube-apiserver",
  "kube-controller-manager",
  "kube-scheduler",
  "kube-proxy",
  "kubectl",
  "kubelet",
  "kubeadm",
];

/**
 * The release asset of a binary for this platform, or undefined when no release ships it as a program (agnhost and
 * regression-issue-74839 are published only as images; kind is left to its source build here).
 */
export function releaseAsset(
  name: UpstreamBinary,
  versions: UpstreamVersions,
  platform: Platform,
  env: Env,
): ReleaseAsset | undefined {
  const { os, arch } = platform;
  if (KUBE_BINARIES.includes(name)) {
    const url = `${base("kubernetes", env)}/${versions.kubernetes}/bin/${os}/${arch}/${name}`;
    return { name, origin: "kubernetes", url, checksumUrl: `${url}.sha256`, checksumName: name };
  }
  if (name === "e2e.test" || name === "ginkgo") {
    // The e2e suite and its ginkgo ship together in the test tarball, kubernetes/test/bin/.
    const file = `kubernetes-test-${os}-${arch}.tar.gz`;
    const url = `${base("kubernetes", env)}/${versions.kubernetes}/${file}`;
    return {
      name,
      origin: "kubernetes",
      url,
      checksumUrl: `${url}.sha256`,
      checksumName: file,
      entry: `kubernetes/test/bin/${name}`,
    };
  }
  if (name === "etcd") {
    const stem = `etcd-${versions.etcd}-${os}-${arch}`;
    // The darwin builds are zip files; only the Linux tarball is read here.
    if (os !== "linux") return undefined;
    const dir = `${base("etcd", env)}/${versions.etcd}`;
    return {
      name,
      origin: "etcd",
      url: `${dir}/${stem}.tar.gz`,
      checksumUrl: `${dir}/SHA256SUMS`,
      checksumName: `${stem}.tar.gz`,
      entry: `${stem}/etcd`,
    };
  }
  if (name === "coredns") {
    const file = `coredns_${versions.coredns.replace(/^v/, "")}_${os}_${arch}.tgz`;
    const url = `${base("coredns", env)}/${versions.coredns}/${file}`;
    return {
      name,
      origin: "coredns",
      url,
      checksumUrl: `${url}.sha256`,
      checksumName: file,
      entry: "coredns",
    };
  }
  return undefined;
}

/**
 * The SHA-256 a checksum file gives for `fileName`. Takes the three published shapes: a bare hash (dl.k8s.io), one
 * "hash  name" line (CoreDNS), several such lines (etcd's SHA256SUMS; a leading `*` marks binary mode).
 */
export function parseChecksum(text: string, fileName: string): string {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
  const first = lines[0]?.split(/\s+/);
  if (lines.length === 1 && first?.length === 1 && /^[0-9a-f]{64}$/i.test(first[0] ?? ""))
    return (first[0] as string).toLowerCase();
  for (const line of lines) {
    const match = /^([0-9a-f]{64})\s+\*?(\S+)$/i.exec(line);
    if (match?.[1] && match[2] && match[2].replace(/^\.\//, "") === fileName) return match[1].toLowerCase();
  }
  throw new Error(`no SHA-256 for ${fileName} in the checksum file`);
}

/** What `upstream where` says about a cached binary: a release download and its URL, or a source build. */
export type BinaryOrigin = { kind: "release"; url: string } | { kind: "source" };

/** The one line written beside a binary as `<name>.origin`. */
export function formatOrigin(origin: BinaryOrigin): string {
  return origin.kind === "release" ? `release ${origin.url}\n` : "source packages/testbed/upstream\n";
}

export function parseOrigin(text: string): BinaryOrigin | undefined {
  const [kind, rest] = text.trim().split(/\s+/, 2);
  if (kind === "release" && rest) return { kind: "release", url: rest };
  if (kind === "source") return { kind: "source" };
  return undefined;
}

/** Downloads are tried unless switched off or the platform has no releases. */
export function downloadsWanted(env: Env): boolean {
  return env[RELEASES_SWITCH] !== "off";
}
