/** The traffic generator's counters (loadgen.ts), and their difference between two readings. */
export interface LoadFailure {
  /** When the failed attempt was sent (not when it timed out): what a deletion or lameduck is compared with. */
  at: string;
  kind: "tcp" | "dns";
  target: string;
  error: string;
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

/** What happened between two readings of the same generator. */
export function loadDelta(before: LoadStats, after: LoadStats): Omit<LoadStats, "startedAt"> {
  return {
    now: after.now,
    rounds: after.rounds - before.rounds,
    tcp: {
      attempts: after.tcp.attempts - before.tcp.attempts,
      failures: after.tcp.failures - before.tcp.failures,
    },
    dns: {
      attempts: after.dns.attempts - before.dns.attempts,
      failures: after.dns.failures - before.dns.failures,
    },
    recent: after.recent.filter((f) => f.at > before.now),
  };
}
