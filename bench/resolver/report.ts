// The results file: for each core layout, the side-by-side tables (saturated, fixed rates, memory) and the goals
// of issue 39 judged on that layout, then the settings it ran with.
import type { Measured } from "./measure.js";
import type { ServerKind } from "./servers.js";
import type { Workload } from "./workloads.js";

export interface WorkloadResult {
  workload: Workload;
  saturated: Record<ServerKind, Measured>;
  /** Keyed by the offered rate (qps). */
  fixedRates: Map<number, Record<ServerKind, Measured>>;
  /** VmRSS once the server answered ready (informers synced), before any query: at rest. */
  idleRssMiB: Record<ServerKind, number>;
  /** What the worker processes said they are: switchyard-dns's process count, CoreDNS's GOMAXPROCS. */
  parallelism: Record<ServerKind, string>;
  /** Cache hits over lookups during the saturated run, for the workloads with `cache`. */
  hitRate: Partial<Record<ServerKind, number>>;
}

/** Where the servers and the load ran. */
export interface Layout {
  id: string;
  title: string;
  /** taskset's list for the server. */
  serverCpus: string;
  /** taskset's list for dnsperf, when it is kept off the server's CPUs. */
  clientCpus?: string;
}

export interface LayoutResults {
  layout: Layout;
  results: WorkloadResult[];
}

export interface ReportContext {
  date: string;
  machine: string;
  loadBefore: string;
  versions: string;
  cluster: string;
  quick: boolean;
  command: string;
}

const KINDS = ["coredns", "switchyard"] as const;
const NAME: Record<ServerKind, string> = { coredns: "CoreDNS", switchyard: "switchyard-dns" };
const ms = (s: number) => (s * 1000).toFixed(2);
const cores = (c: number) => c.toFixed(2);
const perQuery = (m: Measured) => (m.completed ? (m.serverCores * m.seconds) / m.completed : Number.NaN);

/** The share of answers that carried the expected rcode, and the other rcodes seen. */
function rcodeCheck(w: Workload, m: Measured): string {
  const total = Object.values(m.rcodes).reduce((a, b) => a + b, 0);
  const ok = m.rcodes[w.expect] ?? 0;
  const others = Object.entries(m.rcodes)
    .filter(([k]) => k !== w.expect)
    .map(([k, v]) => `${k} ${v}`);
  const pct = total ? ((100 * ok) / total).toFixed(1) : "0";
  return others.length ? `${pct}% ${w.expect}; ${others.join(", ")}` : `100% ${w.expect}`;
}

function saturatedTable(results: readonly WorkloadResult[]): string[] {
  const lines = [
    "### Saturated (as fast as each server answers)",
    "",
    "| workload | server | processes / GOMAXPROCS | qps | vs CoreDNS | p50 ms | p99 ms | p99.9 ms | lost | server CPU (cores) | CPU µs/query | vs CoreDNS | cache hit rate | others' CPU | rcodes |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
  ];
  for (const r of results) {
    const base = r.saturated.coredns;
    for (const kind of KINDS) {
      const m = r.saturated[kind];
      lines.push(
        `| ${r.workload.title} | ${NAME[kind]} | ${r.parallelism[kind]} | ${Math.round(m.qps)} | ${(m.qps / base.qps).toFixed(2)}x | ` +
          `${ms(m.p50)} | ${ms(m.p99)} | ${ms(m.p999)} | ${m.lost} | ${cores(m.serverCores)} | ` +
          `${(perQuery(m) * 1e6).toFixed(1)} | ${(perQuery(m) / perQuery(base)).toFixed(2)}x | ${hitRateCell(r.hitRate[kind])} | ` +
          `${cores(m.otherCores)} | ${rcodeCheck(r.workload, m)} |`,
      );
    }
  }
  return lines;
}

function hitRateCell(rate: number | undefined): string {
  return rate === undefined ? "" : `${(rate * 100).toFixed(2)}%`;
}

function gcCell(m: Measured): string {
  if (!m.gc) return "n/a";
  return `${m.gc.count} / ${m.gc.totalMs.toFixed(1)} / ${m.gc.maxMs.toFixed(2)}`;
}

function fixedRateTable(results: readonly WorkloadResult[]): string[] {
  const lines = [
    "### Fixed rates (the same offered rate for both): latency below saturation",
    "",
    "GC pauses are the server's stop-the-world pauses during the run, from its own trace: count / total ms / longest ms.",
    "",
    "| workload | offered qps | server | qps answered | p50 ms | p99 ms | p99.9 ms | lost | server CPU (cores) | GC pauses | others' CPU |",
    "|---|--:|---|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  for (const r of results) {
    for (const [rate, byKind] of r.fixedRates) {
      for (const kind of KINDS) {
        const m = byKind[kind];
        lines.push(
          `| ${r.workload.title} | ${rate} | ${NAME[kind]} | ${Math.round(m.qps)} | ${ms(m.p50)} | ${ms(m.p99)} | ${ms(m.p999)} | ` +
            `${m.lost} | ${cores(m.serverCores)} | ${gcCell(m)} | ${cores(m.otherCores)} |`,
        );
      }
    }
  }
  return lines;
}

/** Each server's resident set at rest (ready, no query yet) and at its peak, with ours over CoreDNS's. */
function memoryTable(results: readonly WorkloadResult[]): string[] {
  const lines = [
    "### Memory: at rest and at peak",
    "",
    "At rest is VmRSS once the server answered ready (informers synced, Corefile loaded), before the first query; " +
      "peak RSS is VmHWM over the whole workload. Both are summed over a server's processes, so with several " +
      "switchyard-dns workers the node executable's pages, shared by all of them, count once per process. Peak PSS " +
      "(the highest sample, every 500 ms during the measured runs, of /proc/<pid>/smaps_rollup's Pss summed over " +
      "the processes) counts a shared page once in all.",
    "",
    "| workload | CoreDNS at rest MiB | switchyard-dns at rest MiB | CoreDNS peak RSS MiB | switchyard-dns peak RSS MiB | peak RSS ours/CoreDNS | CoreDNS peak PSS MiB | switchyard-dns peak PSS MiB | peak PSS ours/CoreDNS |",
    "|---|--:|--:|--:|--:|--:|--:|--:|--:|",
  ];
  const peakPss = (r: WorkloadResult, kind: ServerKind) =>
    Math.max(
      r.saturated[kind].peakPssMiB,
      ...[...r.fixedRates.values()].map((byKind) => byKind[kind].peakPssMiB),
    );
  for (const r of results) {
    const [ui, oi] = [r.idleRssMiB.coredns, r.idleRssMiB.switchyard];
    const [up, op] = [r.saturated.coredns.peakRssMiB, r.saturated.switchyard.peakRssMiB];
    const [us, os] = [peakPss(r, "coredns"), peakPss(r, "switchyard")];
    lines.push(
      `| ${r.workload.title} | ${ui.toFixed(0)} | ${oi.toFixed(0)} | ${up.toFixed(0)} | ${op.toFixed(0)} | ${(op / up).toFixed(2)}x | ` +
        `${us.toFixed(0)} | ${os.toFixed(0)} | ${(os / us).toFixed(2)}x |`,
    );
  }
  return lines;
}

/** Issue 39's goals on one layout: each met or not, with the workload that decides it. */
function goals(results: readonly WorkloadResult[]): string[] {
  if (results.length === 0) return [];
  const worst = (score: (r: WorkloadResult) => number, higherIsWorse: boolean) =>
    results
      .map((r) => ({ r, v: score(r) }))
      .reduce((a, b) => ((higherIsWorse ? b.v > a.v : b.v < a.v) ? b : a));
  const verdict = (ok: boolean) => `**${ok ? "met" : "not met"}**`;
  const qps = worst((r) => r.saturated.switchyard.qps / r.saturated.coredns.qps, false);
  const cpu = worst((r) => perQuery(r.saturated.switchyard) / perQuery(r.saturated.coredns), true);
  const p99At = (r: WorkloadResult, kind: ServerKind) => r.fixedRates.get(2000)?.[kind].p99 ?? Number.NaN;
  const tail = worst((r) => p99At(r, "switchyard") / p99At(r, "coredns"), true);
  const rss = worst((r) => r.saturated.switchyard.peakRssMiB / r.saturated.coredns.peakRssMiB, true);
  const pss = worst((r) => r.saturated.switchyard.peakPssMiB / r.saturated.coredns.peakPssMiB, true);
  const lines = [
    "### Goals (issue 39), on this layout",
    "",
    `- qps ≥ 1.5x CoreDNS's in all five: ${verdict(qps.v >= 1.5)} (lowest ${qps.v.toFixed(2)}x, ${qps.r.workload.title})`,
    `- CPU per query ≤ 0.5x in all five: ${verdict(cpu.v <= 0.5)} (highest ${cpu.v.toFixed(2)}x, ${cpu.r.workload.title})`,
  ];
  if (results.some((r) => r.fixedRates.has(2000)))
    lines.push(
      `- p99 at 2000 qps ≤ CoreDNS's in all five: ${verdict(tail.v <= 1)} (worst ${ms(p99At(tail.r, "switchyard"))} vs ` +
        `${ms(p99At(tail.r, "coredns"))} ms, ${tail.r.workload.title})`,
    );
  lines.push(
    `- peak RSS ≤ 1.2x: ${verdict(rss.v <= 1.2)} (highest ${rss.v.toFixed(2)}x, ${rss.r.workload.title}; ` +
      `peak PSS of the saturated run, shared pages counted once: highest ${pss.v.toFixed(2)}x, ${pss.r.workload.title})`,
  );
  return lines;
}

export function renderReport(ctx: ReportContext, layouts: readonly LayoutResults[], notes: string[]): string {
  const lines = [
    `# Cluster DNS: switchyard-dns vs CoreDNS (${ctx.date})${ctx.quick ? " — QUICK RUN" : ""}`,
    "",
    `\`${ctx.command}\``,
    "",
    `Machine: ${ctx.machine}`,
    `Load average before the run: ${ctx.loadBefore}`,
    ctx.versions,
    ctx.cluster,
  ];
  for (const { layout, results } of layouts) {
    lines.push(
      "",
      `## ${layout.title}`,
      "",
      ...saturatedTable(results),
      "",
      ...fixedRateTable(results),
      "",
      ...memoryTable(results),
      "",
      ...goals(results),
    );
  }
  lines.push("", ...notes, "");
  return lines.join("\n");
}
