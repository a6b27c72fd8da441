// bench/results/proxier.md: the machine, the side-by-side tables, and the goals each number is read against.
import { median, percentile } from "../machine.js";
import type { FullSync, PartialSample } from "./measure.js";
import type { Impl, Mode } from "./proxies.js";
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
  const name = r.impl === "kube-proxy" ? "kube-proxy v1.37.2" : "switchyard-proxy";
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
    bytes.length ? `${kb(median(bytes))}, ${median(lines)} lines` : "n/a",
    full ? `${kb(full.bytes)}, ${full.lines} lines` : "n/a",
    `${us(r.latency?.first ?? [])}${pos(r.positions?.first)}`,
    `${us(r.latency?.last ?? [])}${pos(r.positions?.last)}`,
    r.peakRssMiB ? `${r.peakRssMiB.toFixed(0)} MiB` : "n/a",
    r.load.toFixed(1),
    "",
  ]
    .join(" | ")
    .trim();
}

function ratios(runs: readonly RunResult[]): string[] {
  const out = [
    "| Services | mode | full sync ours/upstream | partial median ours/upstream | partial p90 ours/upstream | partial bytes ours/upstream | goal (≤ 0.5x) |",
    "|---|---|---|---|---|---|---|",
  ];
  const keys = [...new Set(runs.map((r) => `${r.services}|${r.mode}`))];
  for (const key of keys) {
    const [services, mode] = key.split("|") as [string, Mode];
    const ours = runs.find((r) => `${r.services}|${r.mode}` === key && r.impl === "switchyard");
    const theirs = runs.find((r) => `${r.services}|${r.mode}` === key && r.impl === "kube-proxy");
    if (!ours || !theirs || ours.error || theirs.error) continue;
    const po = partialStats(ours);
    const pt = partialStats(theirs);
    const bo = median((ours.partials ?? []).map((x) => x.bytes));
    const bt = median((theirs.partials ?? []).map((x) => x.bytes));
    const fullR = (ours.full?.seconds ?? 0) / (theirs.full?.seconds ?? 1);
    const partR = (po?.median ?? 0) / (pt?.median ?? 1);
    const met = [
      fullR <= 0.5 ? "full: met" : "full: not met",
      partR <= 0.5 ? "partial: met" : "partial: not met",
    ];
    out.push(
      `| ${services} | ${MODE_LABEL[mode]} | ${ratio(ours.full?.seconds, theirs.full?.seconds)} | ${ratio(po?.median, pt?.median)} | ${ratio(po?.p90, pt?.p90)} | ${ratio(bo, bt)} | ${met.join(", ")} |`,
    );
  }
  return out;
}

/**
 * Each sync split into the kernel tool's share (iptables-restore or `nft -f`, timed by the wrapper) and
 * the rest (the proxy's own work: change tracking, render, process start). The tool's share is what no
 * proxy writing the same rules can remove, so "floor" = our tool time / upstream's whole sync.
 */
function toolShare(runs: readonly RunResult[]): string[] {
  const out = [
    "| Services | mode | proxy | full sync: tool / rest | partial median: tool / rest | floor for ours (tool time / upstream's sync): full, partial |",
    "|---|---|---|---|---|---|",
  ];
  for (const r of runs) {
    if (r.error || !r.full) continue;
    const partials = r.partials ?? [];
    const pTool = partials.length ? median(partials.map((x) => x.toolMs)) / 1000 : undefined;
    const pRest = partials.length ? median(partials.map((x) => x.seconds - x.toolMs / 1000)) : undefined;
    const fTool = r.full.toolMs / 1000;
    let floor = "";
    if (r.impl === "switchyard") {
      const theirs = runs.find(
        (t) => t.impl === "kube-proxy" && t.services === r.services && t.mode === r.mode && !t.error,
      );
      const tp = theirs ? partialStats(theirs) : undefined;
      floor = `${ratio(fTool, theirs?.full?.seconds)}, ${ratio(pTool, tp?.median)}`;
    }
    const name = r.impl === "kube-proxy" ? "kube-proxy v1.37.2" : "switchyard-proxy";
    out.push(
      `| ${r.services} | ${MODE_LABEL[r.mode]} | ${name} | ${ms(fTool)} / ${ms(Math.max(0, r.full.seconds - fTool))} | ${pTool === undefined || pRest === undefined ? "n/a" : `${ms(pTool)} / ${ms(Math.max(0, pRest))}`} | ${floor} |`,
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
    "| Services | mode | proxy | full sync | partial sync median / p90 | sent per partial sync (median) | full-sync write (largest) | first packet, Service #1 | first packet, last Service | peak RSS | load |",
    "|---|---|---|---|---|---|---|---|---|---|---|",
    ...r.runs.map(row),
    "",
    "## Against the goals",
    "",
    ...ratios(r.runs),
    "",
    "## Where the time goes",
    "",
    "The tool column is how long each proxy waited for iptables-restore or `nft -f` (the largest write of the",
    "full sync; all writes of a partial one), timed by the same wrapper; the rest is the proxy's own work. A",
    "floor above 0.5x means the goal cannot be met by a proxy that hands the kernel tool the same rules.",
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
