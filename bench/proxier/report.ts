// bench/results/proxier.md: the machine, the side-by-side tables, and the goals each number is read against.
import { median, percentile } from "../machine.js";
import type { FullSync, PartialSample } from "./measure.js";
import { type Impl, implLabel, logsItsWrites, type Mode } from "./proxies.js";
import type { RenderResult } from "./render.js";

export interface RunResult {
  readonly services: number;
  readonly mode: Mode;
  readonly impl: Impl;
  readonly error?: string;
  readonly full?: FullSync;
  readonly partials?: PartialSample[];
  /** Connect times (µs) to Service #1 and to the last Service. */
  readonly latency?: { first: number[]; last: number[] };
  /** iptables: 1-based rule position of each in nat KUBE-SERVICES, and its length. */
  readonly positions?: { first?: number; last?: number; chainLength: number };
  readonly peakRssMiB?: number;
  /** VmRSS after the partial syncs and connects, the proxy at rest. */
  readonly restRssMiB?: number;
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
const ratio = (ours: number | undefined, theirs: number | undefined) =>
  ours !== undefined && theirs !== undefined && theirs > 0 ? `${(ours / theirs).toFixed(2)}x` : "n/a";

export const MODE_LABEL: Record<Mode, string> = {
  iptables: "iptables (iptables-nft backend)",
  "iptables-legacy": "iptables (legacy backend)",
  nftables: "nftables",
};

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
  const bytes = partials.map((x) => x.bytes);
  const lines = partials.map((x) => x.lines);
  const full = r.full;
  const pos = (n?: number) => (r.positions ? ` (rule ${n ?? "?"}/${r.positions.chainLength})` : "");
  return [
    "",
    r.services,
    MODE_LABEL[r.mode],
    name,
    full ? `${ms(full.seconds)}${full.exact ? "" : " ≈"}` : "n/a",
    p ? `${ms(p.median)} / ${ms(p.p90)} (n=${p.n}${notPartial ? `, ${notPartial} full` : ""})` : "n/a",
    logsItsWrites(r.impl, r.mode)
      ? "netlink"
      : bytes.length
        ? `${kb(median(bytes))}, ${median(lines)} lines`
        : "n/a",
    logsItsWrites(r.impl, r.mode) ? "netlink" : full ? `${kb(full.bytes)}, ${full.lines} lines` : "n/a",
    `${us(r.latency?.first ?? [])}${pos(r.positions?.first)}`,
    `${us(r.latency?.last ?? [])}${pos(r.positions?.last)}`,
    r.peakRssMiB ? `${r.restRssMiB?.toFixed(0) ?? "?"} / ${r.peakRssMiB.toFixed(0)} MiB` : "n/a",
    r.load.toFixed(1),
    "",
  ]
    .join(" | ")
    .trim();
}

/** The issue's goals, as ratios to upstream: [full sync, partial sync]; undefined where none is set. */
function goals(mode: Mode, services: number): [number | undefined, number | undefined] {
  if (mode === "nftables") return [services >= 10000 ? 0.2 : 0.5, 0.25];
  if (mode === "iptables-legacy") return [undefined, services >= 10000 ? 0.6 : undefined];
  return [undefined, undefined];
}

/** The issue's memory goal: our proxy's peak at most 1.5x kube-proxy's, in every mode and size. */
const PEAK_RSS_GOAL = 1.5;

function verdict(what: string, value: number, goal: number | undefined): string {
  return goal === undefined ? "" : `${what} ≤ ${goal}x: ${value <= goal ? "met" : "not met"}`;
}

const theirRun = (runs: readonly RunResult[], r: RunResult) =>
  runs.find((t) => t.impl === "kube-proxy" && t.services === r.services && t.mode === r.mode && !t.error);

function ratios(runs: readonly RunResult[]): string[] {
  const out = [
    "| Services | mode | ours | full sync ours/upstream | partial median ours/upstream | partial p90 ours/upstream | partial bytes ours/upstream | RSS at rest / peak ours/upstream | goals |",
    "|---|---|---|---|---|---|---|---|---|",
  ];
  for (const ours of runs) {
    if (ours.impl === "kube-proxy" || ours.error) continue;
    const theirs = theirRun(runs, ours);
    if (!theirs) continue;
    const po = partialStats(ours);
    const pt = partialStats(theirs);
    const netlink = logsItsWrites(ours.impl, ours.mode);
    const bo = median((ours.partials ?? []).map((x) => x.bytes));
    const bt = median((theirs.partials ?? []).map((x) => x.bytes));
    const [fullGoal, partialGoal] = goals(ours.mode, ours.services);
    const met = [
      verdict("full", (ours.full?.seconds ?? 0) / (theirs.full?.seconds ?? 1), fullGoal),
      verdict("partial", (po?.median ?? 0) / (pt?.median ?? 1), partialGoal),
      verdict("peak RSS", (ours.peakRssMiB ?? 0) / (theirs.peakRssMiB ?? 1), PEAK_RSS_GOAL),
    ].filter(Boolean);
    const memory = `${ratio(ours.restRssMiB, theirs.restRssMiB)} / ${ratio(ours.peakRssMiB, theirs.peakRssMiB)}`;
    out.push(
      `| ${ours.services} | ${MODE_LABEL[ours.mode]} | ${implLabel(ours.impl, ours.mode)} | ${ratio(ours.full?.seconds, theirs.full?.seconds)} | ${ratio(po?.median, pt?.median)} | ${ratio(po?.p90, pt?.p90)} | ${netlink ? "netlink" : ratio(bo, bt)} | ${memory} | ${met.join(", ")} |`,
    );
  }
  return out;
}

const mean = (xs: readonly number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);

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
    const pKernel = partials.length ? mean(partials.map((x) => x.kernelMs)) / 1000 : undefined;
    const fTool = r.full.toolMs / 1000;
    const fKernel = r.full.kernelMs / 1000;
    let fullRatios = "";
    let partialRatios = "";
    const theirs = r.impl === "kube-proxy" ? undefined : theirRun(runs, r);
    if (theirs?.full) {
      const tp = theirs.partials ?? [];
      fullRatios = [
        ratio(r.full.seconds, theirs.full.seconds),
        ratio(fTool, theirs.full.toolMs / 1000),
        ratio(fKernel, theirs.full.kernelMs / 1000),
      ].join(", ");
      partialRatios = [
        ratio(p?.median, partialStats(theirs)?.median),
        ratio(pTool, tp.length ? median(tp.map((x) => x.toolMs)) / 1000 : undefined),
        ratio(pKernel, tp.length ? mean(tp.map((x) => x.kernelMs)) / 1000 : undefined),
      ].join(", ");
    }
    const partialCell =
      p && pTool !== undefined && pKernel !== undefined
        ? `${ms(p.median)} / ${ms(pTool)} / ${ms(pKernel)}`
        : "n/a";
    out.push(
      `| ${r.services} | ${MODE_LABEL[r.mode]} | ${implLabel(r.impl, r.mode)} | ${ms(r.full.seconds)} / ${ms(fTool)} / ${ms(fKernel)} | ${partialCell} | ${fullRatios} | ${partialRatios} |`,
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
    "that Service in nat KUBE-SERVICES in iptables mode (nftables looks it up in a map).",
    "",
    "## Side by side",
    "",
    "| Services | mode | proxy | full sync | partial sync median / p90 | sent per partial sync (median) | full-sync write (largest) | first packet, Service #1 | first packet, last Service | RSS at rest / peak | load |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...r.runs.map(row),
    "",
    "## Against the goals",
    "",
    ...ratios(r.runs),
    "",
    "## Where the time goes",
    "",
    "The writer column is how long each proxy waited for iptables-restore or `nft -f` (the largest write of the",
    "full sync; all writes of a partial one), timed by the same wrapper, or for our netlink writer the write as",
    "the proxy logs it (encoding, send, the kernel's handling of the batch). Kernel system is the system CPU",
    "time of the same writes: the tool's (and tee's) as the wrapper's `times` reports it, or our proxy's",
    "during its netlink write (process.cpuUsage(); the kernel handles the batch in the send call). Partial",
    "syncs: the median of the totals and writer times, the mean of the kernel times (they are a few ms).",
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
