// Garbage-collector pauses from each server's own trace, for the tail-latency tables: Node's --trace-gc line per
// collection ("Scavenge 4.8 (5.6) -> 4.4 (6.6) MB, pooled: 0 MB, 4.75 / 0.00 ms ..."; the first figure is the
// main thread's pause) and Go's GODEBUG=gctrace=1 line per cycle ("gc 5 @1.2s 1%: 0.018+1.2+0.003 ms clock, ...";
// the first and third clock figures are the two stop-the-world phases, the middle one runs beside the program).
import type { ServerKind } from "./servers.js";

/** What a server's trace asks of its command: node flags for ours, environment for CoreDNS. */
export const GC_TRACE = { nodeArgs: ["--trace-gc"], env: { GODEBUG: "gctrace=1" } } as const;

const NODE_PAUSE =
  /: (?:Scavenge|Mark-Compact|Minor Mark-Sweep|Mark-Sweep)\b.*? MB, (?:pooled: [\d.]+ MB, )?([\d.]+) \/ [\d.]+ ms/;
const GO_CLOCK = /^gc \d+ @[\d.]+s \d+%: ([\d.]+)\+[\d.]+\+([\d.]+) ms clock/;

/** Each stop-the-world pause, in milliseconds, that `trace` (a stretch of the server's log) records. */
export function gcPauses(kind: ServerKind, trace: string): number[] {
  const pauses: number[] = [];
  for (const line of trace.split("\n")) {
    if (kind === "switchyard") {
      const m = NODE_PAUSE.exec(line);
      if (m) pauses.push(Number(m[1]));
    } else {
      const m = GO_CLOCK.exec(line);
      if (m) pauses.push(Number(m[1]), Number(m[2]));
    }
  }
  return pauses;
}

export interface GcSummary {
  count: number;
  totalMs: number;
  maxMs: number;
}

export function summarizePauses(pauses: readonly number[]): GcSummary {
  return {
    count: pauses.length,
    totalMs: pauses.reduce((a, b) => a + b, 0),
    maxMs: pauses.reduce((a, b) => Math.max(a, b), 0),
  };
}
