// `trace`'s text: one timeline per change (pod → EndpointSlice write → each node's rules, or maps in ebpf mode),
// then per node the p50 and p99 over the changes.
import { quantile } from "../scenarios/kit/probes.js";
import type { TracedChange } from "./change.js";

const seconds = (ms: number) => `${(ms / 1000).toFixed(3)} s`;
const offset = (ms: number) => `+${(ms / 1000).toFixed(3)} s`.padStart(10);
const clock = (ms: number) => new Date(ms).toISOString();

function podLine(c: TracedChange): string {
  const what = { ready: "Ready", unready: "no longer Ready", deleting: "deleted" }[c.podEvent ?? "ready"];
  if (!c.podSeen)
    return `${offset(0)}  pod change not seen; the slice's trigger time ${c.slice?.triggerTime ?? "?"} stands for it`;
  const since = c.readySince ? ` (its Ready condition says ${c.readySince})` : "";
  return `${offset(0)}  pod ${c.pod} ${what}, seen ${clock(c.podAt)}${since}`;
}

function nodeLines(c: TracedChange, waitedMs: number): { at: number; line: string }[] {
  return c.nodes.map((n) => {
    const of = (n.proxyObservations ?? 1) > 1 ? `, the mean of ${n.proxyObservations} syncs` : "";
    const proxy =
      n.proxySeconds === undefined
        ? ""
        : `   (its proxy's network programming: ${n.proxySeconds.toFixed(3)} s${of})`;
    const rules = n.writes ?? "rules";
    if (!n.affected)
      return {
        at: Number.POSITIVE_INFINITY,
        line: `            ${n.node}: not affected: its ${rules} never send the Service to this endpoint (policy, hints)`,
      };
    if (n.at === undefined)
      return {
        at: Number.POSITIVE_INFINITY,
        line: `            ${n.node}: ${rules} not seen to change within ${seconds(waitedMs)}`,
      };
    const verb = c.kind === "added" ? "send the ClusterIP to it" : "no longer send the ClusterIP to it";
    return { at: n.at, line: `${offset(n.at - c.podAt)}  ${n.node}: ${rules} ${verb}${proxy}` };
  });
}

export function formatChange(c: TracedChange, index: number, total: number, waitedMs: number): string {
  const head = `change ${index} of ${total}: ${c.ip} ${c.kind}${c.pod ? ` (pod ${c.pod})` : ""}, ${c.cause}`;
  const lines = [head, podLine(c)];
  if (c.slice) {
    const trigger = c.slice.triggerTime
      ? `, ${"last-change-trigger-time"} ${c.slice.triggerTime}`
      : ", no trigger time";
    lines.push(
      `${offset(c.slice.at - c.podAt)}  EndpointSlice ${c.slice.name} written: resourceVersion ${c.slice.resourceVersion}${trigger}`,
    );
  }
  const nodes = nodeLines(c, waitedMs).sort((a, b) => a.at - b.at);
  return [...lines, ...nodes.map((n) => n.line)].join("\n");
}

/** "p50 / p99" of a list of milliseconds, or "-" when empty. */
function spread(ms: readonly number[]): string {
  if (ms.length === 0) return "-";
  return `${seconds(quantile(ms, 0.5))} / ${seconds(quantile(ms, 0.99))}`;
}

export function formatSummary(
  changes: readonly TracedChange[],
  nodes: readonly string[],
  resolutionMs: number,
): string {
  const rows = nodes.map((node) => {
    const mine = changes.flatMap((c) =>
      c.nodes.filter((n) => n.node === node && n.affected).map((n) => ({ c, n })),
    );
    const done = mine.filter((x) => x.n.at !== undefined);
    const fromPod = done.map((x) => (x.n.at ?? 0) - x.c.podAt);
    const fromSlice = done.filter((x) => x.c.slice).map((x) => (x.n.at ?? 0) - (x.c.slice?.at ?? 0));
    const proxy = mine.flatMap((x) => (x.n.proxySeconds === undefined ? [] : [x.n.proxySeconds * 1000]));
    return [node, `${done.length}/${mine.length}`, spread(fromPod), spread(fromSlice), spread(proxy)];
  });
  const header = ["node", "seen", "pod → rules", "slice write → rules", "proxy's network programming"];
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((r) => (r[i] ?? "").length)));
  const slices = changes.filter((c) => c.slice && c.podSeen).map((c) => (c.slice?.at ?? 0) - c.podAt);
  return [
    `last ${changes.length} change${changes.length === 1 ? "" : "s"}, p50 / p99 per node:`,
    ...table.map((r) => `  ${r.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join("  ")}`.trimEnd()),
    `pod change → EndpointSlice write: ${spread(slices)}`,
    `resolution: a node's rules were read every ${seconds(resolutionMs)} (the slowest node's mean)${changes.length <= 100 ? `; with ${changes.length} change${changes.length === 1 ? "" : "s"} the p99 is their maximum` : ""}`,
  ].join("\n");
}
