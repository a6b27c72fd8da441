// One proxy under test: switchyard-proxy (its built bin, as a user runs it) or the
// real kube-proxy v1.37.2 (as packages/proxier's upstream diff runs it), alone in a fresh node network
// namespace built by @switchyard/kube-proxy-app/testing's Net (node, client and pod namespaces; API server reached
// through a veth and a TCP forwarder). Metrics are served on the node side of the host veth so the
// bench can scrape them from the host. ebpf mode (ours only) also gets a fresh cgroup and pin root.
import { readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { Net } from "@switchyard/kube-proxy-app/testing";
import { startKubeProxy, type TestControlPlane } from "@switchyard/testbed";
import { startBuiltProxy } from "./built-proxy.js";
import { routeClientToPods } from "./client.js";
import { REAL_POD_IPS } from "./cluster.js";
import { type EBPFPlace, lbMapMaxFor, makeEBPFPlace } from "./ebpf-place.js";
import type { KernelWriteLog } from "./shim.js";

/** switchyard: ours with its netlink writer; switchyard-nft: ours writing through `nft -f` (nftables mode only). */
export type Impl = "switchyard" | "switchyard-nft" | "kube-proxy";
export const IMPLS: readonly Impl[] = ["kube-proxy", "switchyard", "switchyard-nft"];
const IMPL_NAME: Record<Impl, string> = {
  "kube-proxy": "kube-proxy v1.37.2",
  switchyard: "switchyard-proxy (netlink)",
  "switchyard-nft": "switchyard-proxy (nft -f)",
};
/** The report's name for an implementation: the writer is named only where there is a choice (nftables). */
export function implLabel(impl: Impl, mode: Mode): string {
  if (impl !== "switchyard" || mode === "nftables") return IMPL_NAME[impl];
  return mode === "ebpf" ? "switchyard-proxy (BPF maps)" : "switchyard-proxy (iptables-restore)";
}
/**
 * Whether the proxy's own log carries its kernel writes: ours in nftables mode, where the netlink writer
 * bypasses the PATH wrappers (time and system CPU), and in ebpf mode, which writes maps (time only). In
 * iptables modes ours runs iptables-restore from PATH like kube-proxy, so the wrappers measure both the same way.
 */
export const logsItsWrites = (impl: Impl, mode: Mode): boolean =>
  impl === "switchyard" && (mode === "nftables" || mode === "ebpf");
/** Whether an implementation runs in a mode: the writer choice exists in nftables mode only, ebpf is ours only. */
export function runsIn(impl: Impl, mode: Mode): boolean {
  if (mode === "ebpf") return impl === "switchyard";
  return impl !== "switchyard-nft" || mode === "nftables";
}
/** iptables-legacy: iptables mode on the legacy (x_tables) backend for both proxies; ebpf: ours only. */
export type Mode = "iptables" | "iptables-legacy" | "nftables" | "ebpf";
export const MODES: readonly Mode[] = ["iptables", "iptables-legacy", "nftables", "ebpf"];

export const MODE_LABEL: Record<Mode, string> = {
  iptables: "iptables (iptables-nft backend)",
  "iptables-legacy": "iptables (legacy backend)",
  nftables: "nftables",
  ebpf: "ebpf (socket programs, ours only)",
};

/** The --proxy-mode a bench mode runs. */
export const proxyMode = (mode: Mode): "iptables" | "nftables" | "ebpf" =>
  mode === "iptables-legacy" ? "iptables" : mode;
/** The kube-proxy run a mode is compared with: its own, or for ebpf (which upstream lacks) nftables mode's. */
export const upstreamMode = (mode: Mode): Mode => (mode === "ebpf" ? "nftables" : mode);
/** detect-local input for both proxies: every pod and fake endpoint address is inside it. */
const CLUSTER_CIDR = "10.0.0.0/8";

export interface ProxyUnderTest {
  readonly impl: Impl;
  readonly mode: Mode;
  readonly net: Net;
  /** ebpf mode: the cgroup2 directory its programs serve; the bench's clients join it. */
  readonly cgroup?: string;
  readonly pid: number;
  readonly startedAt: number;
  exited(): boolean;
  log(): string;
  metrics(): Promise<SyncCounters>;
  /** Our proxy's IPv4 rule writes so far, as it logs them (none for kube-proxy). */
  writes(): LoggedWrite[];
  /** Peak resident memory of the proxy process so far, MiB. */
  peakRssMiB(): number;
  /** Resident memory of the proxy process now, MiB. */
  rssMiB(): number;
  stop(): Promise<void>;
}

/** One "nftables transaction written" (or ebpf mode's "BPF maps written") line of our proxy's log. */
export interface LoggedWrite {
  readonly writer: string;
  readonly elapsedMs: number;
  /**
   * The proxy's system CPU time during the write: the kernel's handling of the netlink batch. ebpf mode does
   * not log it (undefined).
   */
  readonly systemMs: number | undefined;
  readonly fullSync: boolean;
}

export function parseLoggedWrites(log: string): LoggedWrite[] {
  const out: LoggedWrite[] = [];
  for (const line of log.split("\n")) {
    const bpf = line.includes("BPF maps written");
    if (!bpf && !line.includes("nftables transaction written")) continue;
    try {
      const e = JSON.parse(line) as {
        ipFamily?: string;
        writer?: string;
        elapsedMs?: number;
        systemMs?: number;
        fullSync?: boolean;
      };
      if (e.ipFamily !== "IPv4") continue;
      out.push({
        writer: bpf ? "bpf" : (e.writer ?? ""),
        elapsedMs: Number(e.elapsedMs ?? 0),
        systemMs: e.systemMs === undefined ? undefined : Number(e.systemMs),
        fullSync: e.fullSync === true,
      });
    } catch {
      // not a JSON line
    }
  }
  return out;
}

/** One histogram's running totals (seconds), IPv4 series. */
export interface HistogramTotals {
  readonly count: number;
  readonly sum: number;
}

export interface SyncCounters {
  readonly all: HistogramTotals;
  /** iptables mode only (both proxies register these only there). */
  readonly full?: HistogramTotals;
  readonly partial?: HistogramTotals;
  /** ebpf mode: map entries written or deleted by the last sync, all maps (IPv4). */
  readonly bpfEntriesWritten?: number;
  /** ebpf mode: the entries the maps hold after the last sync (IPv4). */
  readonly bpfEntries?: number;
  /** ebpf mode: syncs whose map writes the kernel refused (IPv4). */
  readonly bpfSyncFailures?: number;
}

function histogram(text: string, name: string): HistogramTotals | undefined {
  let count: number | undefined;
  let sum: number | undefined;
  for (const line of text.split("\n")) {
    if (!line.startsWith(`${name}_sum`) && !line.startsWith(`${name}_count`)) continue;
    const m = /^(\S+?)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = m[2] ?? "";
    if (/ip_family="IPv6"/.test(labels)) continue;
    if (m[1] === `${name}_sum`) sum = Number(m[3]);
    if (m[1] === `${name}_count`) count = Number(m[3]);
  }
  return count === undefined || sum === undefined ? undefined : { count, sum };
}

/** A gauge's (or counter's) IPv4 series (one per map), summed; undefined when the proxy has none. */
function gaugeSum(text: string, name: string): number | undefined {
  let total: number | undefined;
  for (const line of text.split("\n")) {
    const m = /^(\S+?)(\{[^}]*\})?\s+(\S+)/.exec(line);
    if (!m || m[1] !== name || /ip_family="IPv6"/.test(m[2] ?? "")) continue;
    total = (total ?? 0) + Number(m[3]);
  }
  return total;
}

export function parseSyncCounters(text: string): SyncCounters {
  const base = "kubeproxy_sync";
  const all = histogram(text, `${base}_proxy_rules_duration_seconds`) ?? { count: 0, sum: 0 };
  const full = histogram(text, `${base}_full_proxy_rules_duration_seconds`);
  const partial = histogram(text, `${base}_partial_proxy_rules_duration_seconds`);
  const written = gaugeSum(text, `${base}_proxy_rules_bpf_map_entries_last`);
  const entries = gaugeSum(text, `${base}_proxy_rules_bpf_map_entries`);
  const failures = gaugeSum(text, `${base}_proxy_rules_bpf_sync_failures_total`);
  return {
    all,
    ...(full ? { full } : {}),
    ...(partial ? { partial } : {}),
    ...(written !== undefined ? { bpfEntriesWritten: written } : {}),
    ...(entries !== undefined ? { bpfEntries: entries } : {}),
    ...(failures !== undefined ? { bpfSyncFailures: failures } : {}),
  };
}

export async function startUnderTest(options: {
  impl: Impl;
  mode: Mode;
  subnet: number;
  cp: TestControlPlane;
  shim: KernelWriteLog;
  /** How many Services the cluster holds: ebpf mode's maps are sized for them. */
  services: number;
}): Promise<ProxyUnderTest> {
  const { impl, mode, subnet, cp, shim, services } = options;
  const net = new Net(`syb${process.pid % 1000}s${subnet}`, subnet);
  let ebpf: EBPFPlace | undefined;
  const removeEBPF = async () => {
    await ebpf?.remove(net.node);
    ebpf = undefined;
  };
  try {
    await net.build(REAL_POD_IPS);
    routeClientToPods(net);
    const kubeconfig = await net.kubeconfigFor(cp.kubeconfigPath, cp.server);
    const metricsAddress = `${net.apiIP}:10249`;
    const common = [
      `--kubeconfig=${kubeconfig}`,
      `--proxy-mode=${proxyMode(mode)}`,
      "--hostname-override=node1",
      `--cluster-cidr=${CLUSTER_CIDR}`,
      `--metrics-bind-address=${metricsAddress}`,
      "--healthz-bind-address=127.0.0.1:10256",
    ];
    // Both proxies find iptables-restore / nft on PATH: the wrappers come first.
    process.env.PATH = shim.path();
    const startedAt = Date.now();
    let pid: number;
    let exited: () => boolean;
    let log: () => string;
    let stop: () => Promise<void>;
    if (impl !== "kube-proxy") {
      // Ours picks the backend kubelet uses, by kubelet's mangle chain (upstream runs `iptables` from PATH).
      if (mode === "iptables-legacy")
        net.in(net.node, ["iptables-legacy", "-t", "mangle", "-N", "KUBE-IPTABLES-HINT"]);
      if (mode === "ebpf") ebpf = makeEBPFPlace(`sy-bench-${process.pid}-${subnet}`, lbMapMaxFor(services));
      // --v=2 (kube-proxy's level here too) logs each rule write with its duration.
      const writer = impl === "switchyard" ? "netlink" : "nft";
      const run = startBuiltProxy(
        net.node,
        [...common, ...(ebpf?.flags ?? []), "--v=2"],
        { PATH: shim.path(), SWITCHYARD_PROXY_NFT_WRITER: writer },
        ebpf ? "nsenter" : "ip-netns-exec",
      );
      pid = run.child.pid ?? 0;
      exited = () => run.child.exitCode !== null || run.child.signalCode !== null;
      log = run.log;
      stop = async () => {
        await Promise.race([run.stop(), sleep(10_000)]);
        if (!exited()) run.child.kill("SIGKILL");
      };
    } else {
      // conntrack sysctls are global, not per namespace: leave them alone (as the upstream diff does)
      const run = startKubeProxy(net.node, [...common, "--conntrack-max-per-core=0", "--v=2"]);
      pid = run.process.pid ?? 0;
      exited = () => run.process.exitCode !== null || run.process.signalCode !== null;
      log = () => readFileSync(run.logPath, "utf8");
      stop = () => run.stop();
    }
    const url = `http://${metricsAddress}/metrics`;
    return {
      impl,
      mode,
      net,
      ...(ebpf ? { cgroup: ebpf.cgroup } : {}),
      pid,
      startedAt,
      exited,
      log,
      writes: () => (impl === "kube-proxy" ? [] : parseLoggedWrites(log())),
      async metrics() {
        const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
        return parseSyncCounters(await res.text());
      },
      peakRssMiB: () => statusMiB(pid, "VmHWM"),
      rssMiB: () => statusMiB(pid, "VmRSS"),
      async stop() {
        try {
          await stop();
        } finally {
          try {
            await removeEBPF();
          } finally {
            await net.destroy();
          }
        }
      },
    };
  } catch (err) {
    await removeEBPF().catch(() => {});
    await net.destroy();
    throw err;
  }
}

/** A memory figure from /proc/<pid>/status in MiB; 0 once the process is gone. */
function statusMiB(pid: number, field: "VmHWM" | "VmRSS"): number {
  try {
    const kb = new RegExp(`${field}:\\s+(\\d+)`).exec(readFileSync(`/proc/${pid}/status`, "utf8"))?.[1];
    return Number(kb ?? 0) / 1024;
  } catch {
    return 0;
  }
}
