import type { Exec } from "../exec.js";
import type { ProxyMode } from "./manifests.js";

/** What a proxy's /metrics says about its syncs: kubeproxy_sync_proxy_rules_duration_seconds' count and sum. */
export interface SyncStats {
  count: number;
  sumSeconds: number;
}

export function parseSyncStats(metrics: string): SyncStats {
  // Summed over the IP families' series.
  const value = (suffix: string) =>
    metrics
      .split("\n")
      .filter((l) => l.startsWith(`kubeproxy_sync_proxy_rules_duration_seconds_${suffix}`))
      .reduce((total, l) => total + (Number(l.split(/\s+/).at(-1)) || 0), 0);
  return { count: value("count"), sumSeconds: value("sum") };
}

/** Mean sync time between two readings of the same proxy (or since its start when `before` is zero). */
export function meanSyncMs(before: SyncStats, after: SyncStats): number | undefined {
  const n = after.count - before.count;
  return n > 0 ? ((after.sumSeconds - before.sumSeconds) / n) * 1000 : undefined;
}

/**
 * Rules of ours in one node: iptables lines mentioning KUBE- in each backend, lines of the kube-proxy tables; and,
 * where the node has ebpf places, ebpf mode's objects: programs attached to its cgroup, objects
 * pinned in its folder (links and maps), and the lines of its nftables table.
 */
export interface RuleCounts {
  iptablesLegacy: number;
  iptablesNft: number;
  nftables: number;
  bpf?: number;
}

/**
 * KUBE-FIREWALL (the "block incoming localnet connections" rule) is left out: the kubelet creates the same chain,
 * so kube-proxy's cleanup of the iptables mode leaves it in place, as upstream's does.
 */
export const countKubeLines = (save: string) =>
  save.split("\n").filter((l) => l.startsWith("-A ") && l.includes("KUBE-") && !l.includes("KUBE-FIREWALL"))
    .length;

/** Lines inside `table ip kube-proxy` / `table ip6 kube-proxy` of an `nft list ruleset`. */
export const countNftProxyLines = (ruleset: string) =>
  countNftTableLines(ruleset, /^table ip6? kube-proxy \{/);

/**
 * Lines of ebpf mode's own table in an `nft list ruleset` (`inet switchyard-ebpf`: one rule that turns the
 * kernel's NAT hooks on for the tc programs' connections).
 */
export const countNftEbpfLines = (ruleset: string) =>
  countNftTableLines(ruleset, /^table inet switchyard-ebpf \{/);

/** Lines inside the tables whose first line `header` matches, braces counted. */
function countNftTableLines(ruleset: string, header: RegExp): number {
  let inside = false;
  let depth = 0;
  let n = 0;
  for (const line of ruleset.split("\n")) {
    if (!inside && header.test(line)) {
      inside = true;
      depth = 0;
    }
    if (!inside) continue;
    n++;
    depth += (line.match(/\{/g) ?? []).length - (line.match(/\}/g) ?? []).length;
    if (depth === 0) inside = false;
  }
  return n;
}

/** Rules the other modes would leave behind: what must be zero once a node has switched to `mode`. */
export function leftovers(c: RuleCounts, mode: ProxyMode): number {
  const iptables = c.iptablesLegacy + c.iptablesNft;
  const bpf = c.bpf ?? 0;
  if (mode === "iptables") return c.nftables + bpf;
  if (mode === "nftables") return iptables + bpf;
  return iptables + c.nftables;
}

/** Where a node's commands run: the argv prefix that gets there (`ip netns exec <ns>`, `docker exec <node>`). */
export type NodeShell = readonly string[];
const prefix = (node: NodeShell) => [...node];

/**
 * A node's ebpf places (stack/ebpf-places.ts): its cgroup, when this machine sees it (a netns lab's), and its pin
 * folder, read through `pinsVia` when it is not on this machine's BPF file system (a kind node's own: `docker exec`).
 */
export interface NodeBpf {
  cgroup?: string;
  pinRoot: string;
  pinsVia?: NodeShell;
}

export async function ruleCounts(exec: Exec, node: NodeShell, bpf?: NodeBpf): Promise<RuleCounts> {
  const inNs = (...argv: string[]) => exec([...prefix(node), ...argv]).catch(() => "");
  const ruleset = await inNs("nft", "list", "ruleset");
  return {
    iptablesLegacy: countKubeLines(await inNs("iptables-legacy-save")),
    iptablesNft: countKubeLines(await inNs("iptables-nft-save")),
    nftables: countNftProxyLines(ruleset),
    ...(bpf ? { bpf: (await bpfObjects(exec, bpf)) + countNftEbpfLines(ruleset) } : {}),
  };
}

/**
 * Programs attached to the node's cgroup (bpftool, from the host: `ip netns exec` would hide the cgroup2 mount)
 * and objects pinned below its folder: the links (the tc programs' too, which go with their pins) and the maps.
 * A bpftool that fails is an error: a count of 0 must mean none. A kind node has no bpftool and its cgroup is not
 * this machine's to name: its pins alone are counted, and every program the proxy attaches is a pinned link.
 */
async function bpfObjects(exec: Exec, bpf: NodeBpf): Promise<number> {
  const attached = bpf.cgroup
    ? (JSON.parse((await exec(["bpftool", "-j", "cgroup", "show", bpf.cgroup])).trim() || "[]") as unknown[])
    : [];
  const find = [...(bpf.pinsVia ?? []), "find", bpf.pinRoot, "-mindepth", "1", "-not", "-type", "d"];
  const pinned = await exec(find).catch(() => "");
  return attached.length + pinned.split("\n").filter(Boolean).length;
}

/** A GET of the node's proxy metrics address (`/metrics`, `/proxyMode`), run where `node` says. */
export const proxyMetricsGet = (node: NodeShell, path: string): string[] => [
  ...prefix(node),
  ...["curl", "-s", "--max-time", "2", `http://127.0.0.1:10249${path}`],
];

/** The node's proxy metrics and mode, from its loopback metrics address (as an operator would curl them). */
export async function proxyView(exec: Exec, node: NodeShell): Promise<{ mode: string; sync: SyncStats }> {
  const curl = (path: string) => exec(proxyMetricsGet(node, path)).catch(() => "");
  return { mode: (await curl("/proxyMode")).trim(), sync: parseSyncStats(await curl("/metrics")) };
}
