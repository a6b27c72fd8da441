/** The traffic generator's counters (loadgen.ts), and their difference between two readings. */

/** Where the lab's workloads tell the traffic generator to serve its counters (`--stats-port`). */
export const loadgenStatsPort = 8080;

export interface LoadFailure {
  /** When the failed attempt was sent (not when it timed out): what a deletion or lameduck is compared with. */
  at: string;
  kind: "tcp" | "dns";
  target: string;
  error: string;
  /** A DNS lookup's UDP source port: where to look for the conntrack entry it met. */
  port?: number;
  /** A timeout's timer fired this many ms after sending: far past the timeout means the client itself was stalled. */
  timerMs?: number;
  /** The answer to a timed-out lookup came after all, this many ms after sending (it was late, not lost). */
  replyMs?: number;
}

export interface LoadStats {
  startedAt: string;
  /** When this reading was taken (set as the counters are served). */
  now: string;
  rounds: number;
  tcp: { attempts: number; failures: number };
  dns: { attempts: number; failures: number };
  /** The newest failures, oldest first (bounded, so a long outage cannot grow the process). */
  recent: LoadFailure[];
}

const keep = 500;

export const emptyLoadStats = (startedAt: string): LoadStats => ({
  startedAt,
  now: startedAt,
  rounds: 0,
  tcp: { attempts: 0, failures: 0 },
  dns: { attempts: 0, failures: 0 },
  recent: [],
});

export function recordFailure(stats: LoadStats, f: LoadFailure): void {
  stats[f.kind].failures++;
  stats.recent.push(f);
  if (stats.recent.length > keep) stats.recent.splice(0, stats.recent.length - keep);
}

/**
 * What happened between two readings of the same generator. Failures are counted by when they were sent, as
 * attempts are: a lookup sent before the first reading that timed out after it belongs to the time before. The
 * counters' difference stands in when the bounded list of failures lost part of the window.
 */
export function loadDelta(before: LoadStats, after: LoadStats): Omit<LoadStats, "startedAt"> {
  const recent = after.recent.filter((f) => f.at > before.now);
  const complete = after.recent.length < keep || (after.recent[0]?.at ?? "") <= before.now;
  const failures = (kind: LoadFailure["kind"]) =>
    complete ? recent.filter((f) => f.kind === kind).length : after[kind].failures - before[kind].failures;
  return {
    now: after.now,
    rounds: after.rounds - before.rounds,
    tcp: { attempts: after.tcp.attempts - before.tcp.attempts, failures: failures("tcp") },
    dns: { attempts: after.dns.attempts - before.dns.attempts, failures: failures("dns") },
    recent,
  };
}
