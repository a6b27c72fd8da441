// The results file: the side-by-side table, one row pair per workload, and the settings it ran with.
import type { Measured } from "./measure.js";
import type { ServerKind } from "./servers.js";
import type { Workload } from "./workloads.js";

export interface WorkloadResult {
  workload: Workload;
  saturated: Record<ServerKind, Measured>;
  fixedRate: Record<ServerKind, Measured>;
  /** VmRSS once the server answered ready (informers synced), before any query: at rest. */
  idleRssMiB: Record<ServerKind, number>;
}

export interface ReportContext {
  date: string;
  machine: string;
  loadBefore: string;
  versions: string;
  cluster: string;
  fixedQps: number;
  quick: boolean;
}

const ms = (s: number) => (s * 1000).toFixed(2);
const cores = (c: number) => c.toFixed(2);

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

/** Each server's resident set at rest (ready, no query yet) and at its peak, with ours over CoreDNS's. */
function memoryTable(results: readonly WorkloadResult[]): string[] {
  const lines = [
    "",
    "## Memory: at rest and at peak",
    "",
    "At rest is VmRSS once the server answered ready (informers synced, Corefile loaded), before the first query; peak is VmHWM over the whole workload.",
    "",
    "| workload | CoreDNS at rest MiB | switchyard-dns at rest MiB | at rest ours/CoreDNS | CoreDNS peak MiB | switchyard-dns peak MiB | peak ours/CoreDNS |",
    "|---|--:|--:|--:|--:|--:|--:|",
  ];
  for (const r of results) {
    const [ui, oi] = [r.idleRssMiB.coredns, r.idleRssMiB.switchyard];
    const [up, op] = [r.saturated.coredns.peakRssMiB, r.saturated.switchyard.peakRssMiB];
    lines.push(
      `| ${r.workload.title} | ${ui.toFixed(0)} | ${oi.toFixed(0)} | ${(oi / ui).toFixed(2)}x | ${up.toFixed(0)} | ${op.toFixed(0)} | ${(op / up).toFixed(2)}x |`,
    );
  }
  return lines;
}

export function renderReport(
  ctx: ReportContext,
  results: readonly WorkloadResult[],
  notes: string[],
): string {
  const lines = [
    `# Cluster DNS: switchyard-dns vs CoreDNS (${ctx.date})${ctx.quick ? " — QUICK RUN" : ""}`,
    "",
    `Machine: ${ctx.machine}`,
    `Load average before the run: ${ctx.loadBefore}`,
    ctx.versions,
    ctx.cluster,
    "",
    "## Saturated (as fast as each server answers)",
    "",
    "| workload | server | qps | vs CoreDNS | p50 ms | p99 ms | p99.9 ms | lost | server CPU (cores) | CPU µs/query | peak RSS MiB | upstream CPU | others' CPU | rcodes |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|--:|---|",
  ];
  for (const r of results) {
    for (const kind of ["coredns", "switchyard"] as const) {
      const m = r.saturated[kind];
      const ratio = kind === "coredns" ? "1.00x" : `${(m.qps / r.saturated.coredns.qps).toFixed(2)}x`;
      const perQuery = m.completed ? ((m.serverCores * m.seconds) / m.completed) * 1e6 : Number.NaN;
      lines.push(
        `| ${r.workload.title} | ${kind === "coredns" ? "CoreDNS" : "switchyard-dns"} | ${Math.round(m.qps)} | ${ratio} | ${ms(m.p50)} | ${ms(m.p99)} | ${ms(m.p999)} | ${m.lost} | ${cores(m.serverCores)} | ${perQuery.toFixed(1)} | ${m.peakRssMiB.toFixed(0)} | ${cores(m.upstreamCores)} | ${cores(m.otherCores)} | ${rcodeCheck(r.workload, m)} |`,
      );
    }
  }
  lines.push(
    "",
    `## Fixed rate (${ctx.fixedQps} qps offered, the same for both): latency below saturation`,
    "",
    "| workload | server | qps answered | p50 ms | p99 ms | p99.9 ms | lost | server CPU (cores) | others' CPU |",
    "|---|---|--:|--:|--:|--:|--:|--:|--:|",
  );
  for (const r of results) {
    for (const kind of ["coredns", "switchyard"] as const) {
      const m = r.fixedRate[kind];
      lines.push(
        `| ${r.workload.title} | ${kind === "coredns" ? "CoreDNS" : "switchyard-dns"} | ${Math.round(m.qps)} | ${ms(m.p50)} | ${ms(m.p99)} | ${ms(m.p999)} | ${m.lost} | ${cores(m.serverCores)} | ${cores(m.otherCores)} |`,
      );
    }
  }
  lines.push(...memoryTable(results), "", "## Goals", "");
  const byId = new Map(results.map((r) => [r.workload.id, r]));
  const cached = byId.get("cached");
  if (cached) {
    const ratio = cached.saturated.switchyard.qps / cached.saturated.coredns.qps;
    const p99 = cached.fixedRate.switchyard.p99 <= cached.fixedRate.coredns.p99;
    const p99Sat = cached.saturated.switchyard.p99 <= cached.saturated.coredns.p99;
    lines.push(
      `- cached qps ≥ 1.0x CoreDNS: **${ratio >= 1 ? "met" : "not met"}** (${ratio.toFixed(2)}x); p99 ≤ CoreDNS's: ` +
        `**${p99Sat ? "met" : "not met"}** saturated (${ms(cached.saturated.switchyard.p99)} vs ${ms(cached.saturated.coredns.p99)} ms), ` +
        `**${p99 ? "met" : "not met"}** at ${ctx.fixedQps} qps (${ms(cached.fixedRate.switchyard.p99)} vs ${ms(cached.fixedRate.coredns.p99)} ms; ` +
        `others used ${cores((cached.fixedRate.switchyard.otherCores + cached.fixedRate.coredns.otherCores) / 2)} cores meanwhile)`,
    );
  }
  const uncached = byId.get("uncached");
  if (uncached) {
    const ratio = uncached.saturated.switchyard.qps / uncached.saturated.coredns.qps;
    lines.push(
      `- uncached qps ≥ 0.8x CoreDNS: **${ratio >= 0.8 ? "met" : "not met"}** (${ratio.toFixed(2)}x)`,
    );
  }
  const forward = byId.get("forward");
  if (forward) {
    const sy = forward.saturated.switchyard;
    const up = forward.saturated.coredns;
    const qps = sy.qps / up.qps;
    const cpu = (sy.serverCores * sy.seconds * up.completed) / (up.serverCores * up.seconds * sy.completed);
    lines.push(
      `- forwarded qps ≥ 1.0x CoreDNS: **${qps >= 1 ? "met" : "not met"}** (${qps.toFixed(2)}x); ` +
        `CPU per query ≤ 1.0x: **${cpu <= 1 ? "met" : "not met"}** (${cpu.toFixed(2)}x)`,
    );
  }
  const peaks = results.map((r) => ({
    title: r.workload.title,
    ratio: r.saturated.switchyard.peakRssMiB / r.saturated.coredns.peakRssMiB,
  }));
  if (peaks.length > 0) {
    const worst = peaks.reduce((a, b) => (b.ratio > a.ratio ? b : a));
    lines.push(
      `- peak RSS ≤ 1.5x CoreDNS's in every workload: **${worst.ratio <= 1.5 ? "met" : "not met"}** ` +
        `(highest ${worst.ratio.toFixed(2)}x, ${worst.title})`,
    );
  }
  lines.push(
    "",
    "CPU per answered query (server user+sys time / queries completed, saturated runs) does not depend on how many " +
      "cores the server got, so it is the steadiest comparison on a shared machine:",
    "",
  );
  for (const r of results) {
    const per = (m: Measured) => (m.serverCores * m.seconds) / m.completed;
    const ratio = per(r.saturated.switchyard) / per(r.saturated.coredns);
    lines.push(
      `- ${r.workload.title}: switchyard-dns ${(per(r.saturated.switchyard) * 1e6).toFixed(1)} µs, ` +
        `CoreDNS ${(per(r.saturated.coredns) * 1e6).toFixed(1)} µs (${ratio.toFixed(1)}x the CPU per query)`,
    );
  }
  lines.push("", ...notes, "");
  return lines.join("\n");
}
