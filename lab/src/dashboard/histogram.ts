/** A Prometheus histogram read from /metrics text: its cumulative buckets summed over every label set. */
export interface Buckets {
  /** Upper bounds, ascending; the last is Infinity. */
  le: number[];
  /** Cumulative counts per upper bound. */
  counts: number[];
}

export function bucketsOf(text: string, name: string): Buckets {
  const byLe = new Map<number, number>();
  const prefix = `${name}_bucket{`;
  for (const line of text.split("\n")) {
    if (!line.startsWith(prefix)) continue;
    const le = /(?:^|,)le="([^"]+)"/.exec(line.slice(prefix.length, line.indexOf("}")))?.[1];
    if (le === undefined) continue;
    const bound = le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le);
    byLe.set(bound, (byLe.get(bound) ?? 0) + (Number(line.split(/\s+/).at(-1)) || 0));
  }
  const le = [...byLe.keys()].sort((a, b) => a - b);
  return { le, counts: le.map((b) => byLe.get(b) ?? 0) };
}

/**
 * The q-quantile as PromQL's histogram_quantile estimates it: linear within the bucket that holds the rank,
 * the lowest bucket starting at 0, and the highest finite bound when the rank falls in the +Inf bucket.
 * Undefined for an empty histogram.
 */
export function quantile(q: number, b: Buckets): number | undefined {
  const total = b.counts.at(-1) ?? 0;
  if (total === 0 || b.le.at(-1) !== Number.POSITIVE_INFINITY) return undefined;
  const rank = q * total;
  const i = b.counts.findIndex((c) => c >= rank);
  if (i === b.le.length - 1) return b.le.at(-2) ?? 0;
  const upper = b.le[i] ?? 0;
  const lower = i === 0 ? 0 : (b.le[i - 1] ?? 0);
  const below = i === 0 ? 0 : (b.counts[i - 1] ?? 0);
  const inBucket = (b.counts[i] ?? 0) - below;
  return inBucket === 0 ? upper : lower + (upper - lower) * ((rank - below) / inBucket);
}
