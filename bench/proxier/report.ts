// bench/results/proxier.md: the machine, the side-by-side tables, and the goals each number is read against.
import { median, percentile } from "../machine.js";
import type { ConnectRate } from "./connect-rate.js";
import type { PacketCost } from "./cpu-per-packet.js";
import { atLeast, atMost, goalsFor } from "./goals.js";
import type { FullSync, PartialSample } from "./measure.js";
import { type Impl, implLabel, logsItsWrites, MODE_LABEL, type Mode, upstreamMode } from "./proxies.js";
import type { RenderResult } from "./render.js";
import { trafficSection } from "./report-traffic.js";

export { MODE_LABEL };

export interface RunResult {
  readonly services: number;
  readonly mode: Mode;
  readonly impl: Impl;
  readonly error?: string;
  readonly full?: FullSync;
  readonly partials?: PartialSample[];
  /** Connect times (µs) to Service #1 and to the last Service. */
  /** Connect times, µs: to Service #1, the last Service, and (newer runs) a pod IP directly. */
  readonly latency?: { first: number[]; last: number[]; pod?: number[] };
  /** iptables: 1-based rule position of each in nat KUBE-SERVICES, and its length. */
  readonly positions?: { first?: number; last?: number; chainLength: number };
  readonly peakRssMiB?: number;
  /** VmRSS after the partial syncs and connects, the proxy at rest. */
  readonly restRssMiB?: number;
  readonly connectRate?: ConnectRate;
  readonly packetCost?: PacketCost;
  /** The connection or packet measurement failed (the sync figures above stand). */
  readonly trafficError?: string;
  /** 1-minute load average when the connection and packet measurements started. */
  readonly trafficLoad?: number;
  /** 1-minute load average when the run started (2 cores: above 2 means someone else was busy too). */
  readonly load: number;
}

export interface Report {
  readonly date: string;
  readonly machine: string;
  readonly versions: string;
  readonly quick: boolean;
  readonly sizes: readonly number[];
  readonly samples: number;
  readonly connects: number;
  /** The connection loop's and the stream's length, s, and the loop's workers. */
  readonly trafficSeconds: number;
  readonly connectWorkers: number;
  readonly connectRounds: number;
  readonly streamRounds: number;
  readonly shimOverheadMs: number;
  readonly render: RenderResult[];
  readonly renderRuns: number;
  readonly runs: RunResult[];
  readonly wallMinutes: number;
  readonly notes: readonly string[];
}

const ms = (s: number) => (s >= 10 ? `${s.toFixed(1)} s` : `${(s * 1000).toFixed(s < 0.1 ? 1 : 0)} ms`);
const kb = (b: number) => (b >= 2 ** 20 ? `${(b / 2 ** 20).toFixed(1)} MiB` : `${(b / 1024).toFixed(1)} KiB`);
const us = (xs: number[]) => (xs.length ? `${median(xs).toFixed(0)} µs` : "n/a");
const msOrNA = (s: number | undefined) => (s === undefined ? "n/a" : ms(s));
const quotient = (ours: number | undefined, theirs: number | undefined) =>
  ours !== undefined && theirs !== undefined && theirs > 0 ? ours / theirs : undefined;
const ratio = (ours: number | undefined, theirs: number | undefined) => {
  const q = quotient(ours, theirs);
  // Below 0.01x two decimals would read 0.00x: one significant digit more than shown there.
  return q === undefined ? "n/a" : `${q < 0.01 ? q.toPrecision(1) : q.toFixed(2)}x`;
};

/** What a sync sends: bytes and lines, "netlink" (not seen by the wrappers), or map entries (ebpf). */
function sentCell(r: RunResult, bytes: number[], lines: number[], entries: (number | undefined)[]): string {
  if (r.mode === "ebpf") {
    const known = entries.filter((e): e is number => e !== undefined);
    return known.length ? `${median(known)} map entries` : "n/a";
  }
  if (logsItsWrites(r.impl, r.mode)) return "netlink";
  return bytes.length ? `${kb(median(bytes))}, ${median(lines)} lines` : "n/a";
}

function partialStats(r: RunResult) {
  const xs = (r.partials ?? []).map((p) => p.seconds);
  return xs.length ? { median: median(xs), p90: percentile(xs, 90), n: xs.length } : undefined;
}

function row(r: RunResult): string {
  const name = implLabel(r.impl, r.mode);
  if (r.error)
    return `| ${r.services} | ${MODE_LABEL[r.mode]} | ${name} | failed: ${r.error.split("\n")[0]} | | | | | | |`;
  const p = partialStats(r);
  const partials = r.partials ?? [];
  const notPartial = partials.filter((x) => x.partial === false).length;
  const full = r.full;
  const pos = (n?: number) => (r.positions ? ` (rule ${n ?? "?"}/${r.positions.chainLength})` : "");
  return [
    "",
    r.services,
    MODE_LABEL[r.mode],
    name,
    full ? `${ms(full.seconds)}${full.exact ? "" : " ≈"}` : "n/a",
    p ? `${ms(p.median)} / ${ms(p.p90)} (n=${p.n}${notPartial ? `, ${notPartial} full` : ""})` : "n/a",
    sentCell(
      r,
      partials.map((x) => x.bytes),
      partials.map((x) => x.lines),
      partials.map((x) => x.entries),
    ),
    full ? sentCell(r, [full.bytes], [full.lines], [full.entries]) : "n/a",
    `${us(r.latency?.first ?? [])}${pos(r.positions?.first)}`,
    `${us(r.latency?.last ?? [])}${pos(r.positions?.last)}`,
    r.latency?.pod?.length ? us(r.latency.pod) : "n/a",
    r.peakRssMiB ? `${r.restRssMiB?.toFixed(0) ?? "?"} / ${r.peakRssMiB.toFixed(0)} MiB` : "n/a",
    r.load.toFixed(1),
    "",
  ]
    .join(" | ")
    .trim();
}

/** kube-proxy's run that ours is compared with: same size, same mode (ebpf: nftables). */
const theirRun = (runs: readonly RunResult[], r: RunResult) =>
  runs.find(
    (t) =>
      t.impl === "kube-proxy" && t.services === r.services && t.mode === upstreamMode(r.mode) && !t.error,
  );

function ratios(runs: readonly RunResult[]): string[] {
  const out = [
    "| Services | mode | ours | compared with | full sync | partial median | partial p90 | partial bytes | first packet #1 / last | new conn/s | CPU per packet | RSS at rest / peak | goals |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|---|",
  ];
  for (const ours of runs) {
    if (ours.impl === "kube-proxy" || ours.error) continue;
    const theirs = theirRun(runs, ours);
    if (!theirs) continue;
    const po = partialStats(ours);
    const pt = partialStats(theirs);
    const bo = median((ours.partials ?? []).map((x) => x.bytes));
    const bt = median((theirs.partials ?? []).map((x) => x.bytes));
    const first = (r: RunResult, k: "first" | "last") =>
      r.latency?.[k].length ? median(r.latency[k]) : undefined;
    const firstRatios = [
      quotient(first(ours, "first"), first(theirs, "first")),
      quotient(first(ours, "last"), first(theirs, "last")),
    ];
    const connRatio = quotient(ours.connectRate?.service.perSecond, theirs.connectRate?.service.perSecond);
    const packetRatio = quotient(
      ours.packetCost?.service.cpuUsPerPacket,
      theirs.packetCost?.service.cpuUsPerPacket,
    );
    const g = goalsFor(ours.mode, ours.services);
    const worstFirst = firstRatios.some((x) => x === undefined)
      ? undefined
      : Math.max(...(firstRatios as number[]));
    const met = [
      atMost("full", quotient(ours.full?.seconds, theirs.full?.seconds), g.fullSync),
      atMost("partial", quotient(po?.median, pt?.median), g.partialSync),
      atMost("first packet", worstFirst, g.firstPacket),
      atLeast("conn/s", connRatio, g.connectRate),
      atMost("peak RSS", quotient(ours.peakRssMiB, theirs.peakRssMiB), g.peakRss),
    ].filter(Boolean);
    const sent =
      ours.mode === "ebpf" ? "map entries" : logsItsWrites(ours.impl, ours.mode) ? "netlink" : ratio(bo, bt);
    out.push(
      [
        "",
        ours.services,
        MODE_LABEL[ours.mode],
        implLabel(ours.impl, ours.mode),
        `kube-proxy ${MODE_LABEL[theirs.mode]}`,
        ratio(ours.full?.seconds, theirs.full?.seconds),
        ratio(po?.median, pt?.median),
        ratio(po?.p90, pt?.p90),
        sent,
        firstRatios.map((x) => (x === undefined ? "n/a" : `${x.toFixed(2)}x`)).join(" / "),
        connRatio === undefined ? "n/a" : `${connRatio.toFixed(2)}x`,
        packetRatio === undefined ? "n/a" : `${packetRatio.toFixed(2)}x`,
        `${ratio(ours.restRssMiB, theirs.restRssMiB)} / ${ratio(ours.peakRssMiB, theirs.peakRssMiB)}`,
        met.join(", "),
        "",
      ]
        .join(" | ")
        .trim(),
    );
  }
  out.push("", ...floorLines(runs));
  return out;
}

/** The mean in seconds of ms values; undefined when there are none or any is unknown. */
const meanKnown = (xs: readonly (number | undefined)[]) =>
  xs.length === 0 || xs.some((x) => x === undefined)
    ? undefined
    : (xs as number[]).reduce((a, b) => a + b, 0) / xs.length / 1000;

/**
 * Each sync split into the writer's share (iptables-restore or `nft -f` timed by the wrapper; our
 * netlink writer as it logs its writes) and the kernel's system time for those writes; the rest of
 * the total is the proxy's own work (change tracking, render). Ratios are to upstream's same column.
 */
function toolShare(runs: readonly RunResult[]): string[] {
  const out = [
    "| Services | mode | proxy | full sync: total / writer / kernel system | partial (median; kernel: mean): total / writer / kernel system | full ratios to upstream: total, writer, kernel | partial ratios to upstream: total, writer, kernel |",
    "|---|---|---|---|---|---|---|",
  ];
  for (const r of runs) {
    if (r.error || !r.full) continue;
    const partials = r.partials ?? [];
    const p = partialStats(r);
    const pTool = partials.length ? median(partials.map((x) => x.toolMs)) / 1000 : undefined;
    const pKernel = meanKnown(partials.map((x) => x.kernelMs));
    const fTool = r.full.toolMs / 1000;
    const fKernel = r.full.kernelMs === undefined ? undefined : r.full.kernelMs / 1000;
    let fullRatios = "";
    let partialRatios = "";
    const theirs = r.impl === "kube-proxy" ? undefined : theirRun(runs, r);
    if (theirs?.full) {
      const tp = theirs.partials ?? [];
      fullRatios = [
        ratio(r.full.seconds, theirs.full.seconds),
        ratio(fTool, theirs.full.toolMs / 1000),
        ratio(fKernel, theirs.full.kernelMs === undefined ? undefined : theirs.full.kernelMs / 1000),
      ].join(", ");
      partialRatios = [
        ratio(p?.median, partialStats(theirs)?.median),
        ratio(pTool, tp.length ? median(tp.map((x) => x.toolMs)) / 1000 : undefined),
        ratio(pKernel, meanKnown(tp.map((x) => x.kernelMs))),
      ].join(", ");
    }
    const partialCell =
      p && pTool !== undefined ? `${ms(p.median)} / ${ms(pTool)} / ${msOrNA(pKernel)}` : "n/a";
    out.push(
      `| ${r.services} | ${MODE_LABEL[r.mode]} | ${implLabel(r.impl, r.mode)} | ${ms(r.full.seconds)} / ${ms(fTool)} / ${msOrNA(fKernel)} | ${partialCell} | ${fullRatios} | ${partialRatios} |`,
    );
  }
  return out;
}

export function renderReport(r: Report): string {
  const lines = [
    `# Proxier: switchyard-proxy vs kube-proxy v1.37.2 (${r.date})${r.quick ? " — QUICK run" : ""}`,
    "",
    `Machine: ${r.machine}`,
    `${r.versions}. Sizes: ${r.sizes.join(", ")} Services x 10 endpoints; ${r.samples} single-endpoint changes per proxy; ${r.connects} connects per target. Whole run: ${r.wallMinutes.toFixed(1)} min.`,
    "",
    "Both proxies ran against the same API server and kernel, each alone in a fresh node network namespace, one at a",
    "time (upstream first, then ours, per size and mode). iptables mode ran on the iptables-nft backend, and on the legacy backend, for both",
    "(the host's `iptables-restore` is nf_tables; ours picks nft when kubelet left no legacy hint). minSyncPeriod 1 s",
    "(both defaults). Sync times come from each proxy's own `kubeproxy_sync_proxy_rules_duration_seconds` histogram",
    "(IPv4 series): the full sync is the start-up sync (one sample per proxy run; `≈` = two syncs fell between",
    "two scrapes and the larger step is shown); each partial sample is the histogram's sum delta over exactly one",
    "sync after one endpoint of one Service changed. Bytes are what each sync piped into iptables-restore or `nft -f`,",
    `seen by a PATH wrapper both proxies ran through (it costs about ${r.shimOverheadMs.toFixed(1)} ms per call, included in both proxies' sync`,
    "times). First-packet latency: median TCP connect time from the client namespace to the ClusterIP (through the",
    "node namespace's DNAT to a real listener in a pod namespace); the last column pair names the rule position of",
    "that Service in nat KUBE-SERVICES in iptables mode (nftables looks it up in a map). The floor is the same connect",
    "to one of those pods' own address, interleaved with the two: the client, node and pod namespaces crossed without",
    "a Service (the node still forwards, and in the netfilter modes tracks, the packets). No proxy's connect through a",
    "Service can be faster than it on this path.",
    "",
    "ebpf mode is ours only (`--proxy-mode ebpf`); its rows are read against kube-proxy's nftables mode of the same",
    "size. Each run had a fresh cgroup2 directory as `--cgroup-root` and a fresh pin root as `--bpf-root`, removed",
    "after it (the proxy's `--cleanup`), and `--bpf-lb-map-max` as a user would set it: Cilium's default (65536) where",
    "that holds a slot 0 and ten backend slots of every Service, else the next power of two (131072 at 10k).",
    "The proxy entered the node namespace with `nsenter --net`, which keeps the",
    "host's /sys where the cgroup and BPF file systems are. Its programs turn a ClusterIP into a pod's address when a",
    "socket of that cgroup connects, so every client of the run (the readiness probes, the first-packet connects,",
    "the connection loop, the stream) joined the cgroup before entering the client namespace, and its packets then",
    "cross the node untranslated. What its syncs send is map entries written or deleted",
    "(`kubeproxy_sync_proxy_rules_bpf_map_entries_last`, all maps, IPv4): per partial sync, and the largest",
    'start-up write. Its writer time below is the map write as the proxy logs it ("BPF maps written"); the',
    "kernel's share of it is not logged (n/a).",
    "",
    "## Side by side",
    "",
    "| Services | mode | proxy | full sync | partial sync median / p90 | sent per partial sync (median) | full-sync write (largest) | first packet, Service #1 | first packet, last Service | connect to a pod IP (floor) | RSS at rest / peak | load |",
    "|---|---|---|---|---|---|---|---|---|---|---|---|",
    ...r.runs.map(row),
    "",
    "## Against the goals",
    "",
    "Ratios of ours to kube-proxy in the same run and size (ebpf: to its nftables mode). CPU per packet and",
    "new connections per second are from the next section.",
    "",
    ...ratios(r.runs),
    "",
    ...trafficSection(r),
    "## Where the time goes",
    "",
    "The writer column is how long each proxy waited for iptables-restore or `nft -f` (the largest write of the",
    "full sync; all writes of a partial one), timed by the same wrapper, or for our netlink writer the write as",
    "the proxy logs it (encoding, send, the kernel's handling of the batch). Kernel system is the system CPU",
    "time of the same writes: the tool's (and tee's) as the wrapper's `times` reports it, or our proxy's",
    "during its netlink write (process.cpuUsage(); the kernel handles the batch in the send call). Partial",
    "syncs: the median of the totals and writer times, the mean of the kernel times (they are a few ms).",
    "ebpf mode's writer is its map writes, as logged; its ratios are to kube-proxy's nftables mode.",
    "",
    ...toolShare(r.runs),
    "",
    `## Pure render (our renderers, no kernel; median of ${r.renderRuns} runs; goal ≤ 300 ms)`,
    "",
    "| Services x 10 | mode | full render | one-endpoint partial render | output full / partial | heap kept by a full result | heap grown during one render (before GC) |",
    "|---|---|---|---|---|---|---|",
    ...r.render.map(
      (x) =>
        `| ${x.services} | ${x.mode} | ${median(x.fullMs).toFixed(0)} ms (min ${Math.min(...x.fullMs).toFixed(0)}, max ${Math.max(...x.fullMs).toFixed(0)}) ${median(x.fullMs) <= 300 ? "— met" : "— not met"} | ${median(x.partialMs).toFixed(1)} ms | ${kb(x.fullBytes)} / ${kb(x.partialBytes)} | ${x.retainedMiB.toFixed(0)} MiB | ${x.grownMiB.toFixed(0)} MiB |`,
    ),
    "",
    "## Reading",
    "",
    ...r.notes,
    "",
  ];
  return lines.join("\n");
}

/**
 * The first-packet goal against the path's floor: a connect to a pod's own address, in the same run, over kube-proxy's
 * connect through the Service. A ratio goal below it cannot be met by any proxy on this path.
 */
function floorLines(runs: readonly RunResult[]): string[] {
  const out: string[] = [];
  for (const theirs of runs) {
    if (theirs.impl !== "kube-proxy" || !theirs.latency?.pod?.length || !theirs.latency.first.length)
      continue;
    const floor = median(theirs.latency.pod);
    const through = median(theirs.latency.first);
    out.push(
      `First-packet floor at ${theirs.services} (kube-proxy ${MODE_LABEL[theirs.mode]}'s run): a pod IP ${floor.toFixed(0)} µs, ` +
        `Service #1 ${through.toFixed(0)} µs; the floor is ${(floor / through).toFixed(2)}x of the connect through the Service.`,
    );
  }
  return out;
}
