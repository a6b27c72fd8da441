import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { familyOf } from "@switchyard/basics";
import yaml from "js-yaml";
import { type LabEbpfPlaces, withEbpfPlaces } from "./ebpf-places.js";

/** A manifest's object: only what applying and rewriting it needs is typed. */
export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [field: string]: unknown;
}

/** kube-proxy's modes a lab runs: upstream's two, and ebpf (ours: socket-level balancing). */
export type ProxyMode = "iptables" | "nftables" | "ebpf";
export const proxyModes: readonly ProxyMode[] = ["iptables", "nftables", "ebpf"];
export const isProxyMode = (s: string): s is ProxyMode => (proxyModes as readonly string[]).includes(s);

/** Why `up --stack upstream --proxy-mode ebpf` is refused, on either runtime. */
export const upstreamNoEbpf =
  "upstream's kube-proxy has no ebpf mode (it is Switchyard's); pick iptables or nftables";

/**
 * Whose service networking a lab runs: Switchyard's (kube-proxy, cluster-dns and slice-controller from
 * apps/<app>/deploy) or upstream's (kube-proxy, CoreDNS and kube-controller-manager's EndpointSlice controllers
 * of the pinned release, as kubeadm installs them), to compare the two or to swap one image at a time.
 */
export type StackKind = "switchyard" | "upstream";
export const stackKinds: readonly StackKind[] = ["switchyard", "upstream"];
export const isStackKind = (s: string): s is StackKind => (stackKinds as readonly string[]).includes(s);

/**
 * Throws one line unless a lab runs Switchyard's stack: scenarios and migrate change our DaemonSets and ConfigMaps
 * (the proxy's mode and per-node switch, the DNS Corefile), which a lab with no stack or upstream's lacks.
 */
export function needOurStack(what: string, stack: { kind?: StackKind } | undefined): void {
  const why = !stack
    ? "none (up --no-stack)"
    : stack.kind === "upstream"
      ? "upstream's (up --stack upstream)"
      : "";
  if (why) throw new Error(`${what} needs Switchyard's stack; this lab runs ${why}`);
}

/** `status`'s stack line: whose stack and kube-proxy's mode, from a lab's state (kind absent: Switchyard's). */
export function stackLine(stack: { kind?: StackKind; proxyMode: ProxyMode } | undefined): string {
  if (!stack) return "stack:      none (--no-stack)";
  const whose =
    stack.kind === "upstream" ? "upstream (kubeadm's kube-proxy and CoreDNS, kcm's slices)" : "switchyard";
  return `stack:      ${whose}, kube-proxy mode ${stack.proxyMode}`;
}

/** Switchyard's stack, in the order an installer applies it: the proxy first, since the others reach the
 * apiserver through the `kubernetes` Service's ClusterIP, which only works once kube-proxy has synced. */
export const stackDeployDirs = [
  "apps/kube-proxy/deploy",
  "apps/slice-controller/deploy",
  "apps/cluster-dns/deploy",
];

/** Every document of every YAML file in the folders, in file order. */
export function readManifests(repoRoot: string, dirs: readonly string[] = stackDeployDirs): KubeObject[] {
  const out: KubeObject[] = [];
  for (const dir of dirs) {
    const files = readdirSync(join(repoRoot, dir))
      .filter((f) => /\.ya?ml$/.test(f))
      .sort();
    for (const file of files) {
      for (const doc of yaml.loadAll(readFileSync(join(repoRoot, dir, file), "utf8"))) {
        if (!doc || typeof doc !== "object") continue;
        const obj = doc as Partial<KubeObject>;
        if (!obj.kind || !obj.apiVersion || !obj.metadata?.name)
          throw new Error(`${dir}/${file}: a document without apiVersion, kind or metadata.name`);
        out.push(obj as KubeObject);
      }
    }
  }
  return out;
}

/**
 * The stack's manifests in two parts: kube-proxy's (apps/kube-proxy/deploy), which `up` applies and waits for
 * first, and the slice controller's and cluster DNS's.
 */
export function readStackParts(repoRoot: string): { proxy: KubeObject[]; rest: KubeObject[] } {
  const [proxyDir, ...restDirs] = stackDeployDirs;
  return {
    proxy: readManifests(repoRoot, proxyDir ? [proxyDir] : []),
    rest: readManifests(repoRoot, restDirs),
  };
}

export interface LabStackOptions {
  proxyMode: ProxyMode;
  /** The apiserver URL for kube-proxy's kubeconfig (kubeadm writes the control-plane endpoint there). */
  server: string;
  clusterCidr: string;
  /** The kube-dns ClusterIP the lab's kubelets write into resolv.conf. */
  dnsIp: string;
  /** The nodes' cgroups and pin folders, given to kube-proxy in every mode (ebpf-places.ts). */
  ebpf?: LabEbpfPlaces;
}

/**
 * The lab's edits to the manifests, the ones a cluster installer makes: kube-proxy's mode, its cluster CIDR and
 * the apiserver it talks to; the kube-dns ClusterIP matching the kubelets' --cluster-dns. Nothing else changes.
 * Edits are made on the config text line by line (as `sed` would), so the file keeps its comments and layout; a
 * line that is not there is an error, never a silent no-op.
 */
export function labStack(objects: readonly KubeObject[], o: LabStackOptions): KubeObject[] {
  return objects.map((original) => {
    const obj = structuredClone(original);
    if (obj.kind === "ConfigMap" && obj.metadata.name === "kube-proxy") {
      const data = obj.data as Record<string, string>;
      data["config.conf"] = setLine(
        data["config.conf"],
        "config.conf",
        /^mode: .*$/m,
        `mode: ${o.proxyMode}`,
      );
      data["config.conf"] = setLine(
        data["config.conf"],
        "config.conf",
        /^clusterCIDR: .*$/m,
        `clusterCIDR: ${o.clusterCidr}`,
      );
      data["kubeconfig.conf"] = setLine(
        data["kubeconfig.conf"],
        "kubeconfig.conf",
        /^(\s*)server: .*$/m,
        `$1server: ${o.server}`,
      );
      // kubeadm binds kube-proxy to "::" when the cluster's primary family is IPv6 (the kube-dns address is in
      // it): 0.0.0.0 would leave the health check unreachable on an IPv6-only node.
      if (familyOf(o.dnsIp) === "IPv6") {
        data["config.conf"] = setLine(
          data["config.conf"],
          "config.conf",
          /^bindAddress: .*$/m,
          `bindAddress: "::"`,
        );
        data["config.conf"] = setLine(
          data["config.conf"],
          "config.conf",
          /^healthzBindAddress: .*$/m,
          `healthzBindAddress: "[::]:10256"`,
        );
      }
    }
    if (obj.kind === "Service" && obj.metadata.name === "kube-dns") {
      (obj.spec as Record<string, unknown>).clusterIP = o.dnsIp;
    }
    if (o.ebpf && isProxyDaemonSet(obj)) return withEbpfPlaces(obj, o.ebpf);
    return obj;
  });
}

const isProxyDaemonSet = (obj: KubeObject) => obj.kind === "DaemonSet" && obj.metadata.name === "kube-proxy";

/**
 * kube-proxy's DaemonSet as the lab runs it, from apps/kube-proxy/deploy: what migrate and the scenarios apply
 * their per-node switch to, so that applying it keeps the lab's edits (its ebpf places).
 */
export function labProxyDaemonSet(repoRoot: string, ebpf?: LabEbpfPlaces): KubeObject {
  const ds = readManifests(repoRoot, ["apps/kube-proxy/deploy"]).find(isProxyDaemonSet);
  if (!ds) throw new Error("apps/kube-proxy/deploy has no kube-proxy DaemonSet");
  return ebpf ? withEbpfPlaces(ds, ebpf) : ds;
}

function setLine(text: string | undefined, file: string, line: RegExp, replacement: string): string {
  if (text === undefined || !line.test(text))
    throw new Error(`kube-proxy ConfigMap: ${file} has no line matching ${line.source}`);
  return text.replace(line, replacement);
}

/** The mode a kube-proxy config.conf asks for (iptables when unset, as upstream on Linux). */
export function configMode(configConf: string): string {
  return /^mode: *"?([a-z]*)"?\s*$/m.exec(configConf)?.[1] || "iptables";
}

/** Rewrites only the mode line of a config.conf. */
export function withMode(configConf: string, mode: ProxyMode): string {
  return setLine(configConf, "config.conf", /^mode: .*$/m, `mode: ${mode}`);
}
