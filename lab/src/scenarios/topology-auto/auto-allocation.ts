import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { zoneHints } from "../kit/topology-path.js";

/** The share of traffic Auto mode expects from each zone: its share of the Ready nodes' allocatable CPU. */
export type ZoneRatios = Readonly<Record<string, number>>;

/** Auto's overload threshold: an endpoint may be asked for 20% more than its fair share. */
const overload = 0.2;

/**
 * Whether Auto can hint `n` endpoints at all: each zone's minimum is its CPU share of `n` shrunk by the threshold,
 * rounded up, and the minima must fit in `n` (restated from the controller's allocation rule, only to pick the
 * endpoint counts worth measuring; the measurement decides).
 */
export function autoCanHint(ratios: ZoneRatios, n: number): boolean {
  const zones = Object.values(ratios);
  if (zones.length < 2 || n < zones.length) return false;
  return zones.reduce((sum, r) => sum + Math.ceil((r * n) / (1 + overload)), 0) <= n;
}

/** The first endpoint count, from the number of zones up, where adding one endpoint turns hints on or off. */
export function flapPoint(ratios: ZoneRatios, upTo = 60): number | undefined {
  for (let n = Object.keys(ratios).length; n < upTo; n++)
    if (autoCanHint(ratios, n) !== autoCanHint(ratios, n + 1)) return n;
  return undefined;
}

/** Ready endpoints hinted for each zone, split by the zone the endpoint is in: { zone-a: { zone-a: 2, zone-b: 12 } }. */
export function hintedByZone(slices: readonly EndpointSlice[]): Map<string, Map<string, number>> {
  const out = new Map<string, Map<string, number>>();
  for (const e of slices.flatMap((s) => s.endpoints ?? [])) {
    if (e.conditions?.ready !== true) continue;
    for (const zone of zoneHints(e)) {
      const from = out.get(zone) ?? new Map<string, number>();
      from.set(e.zone ?? "?", (from.get(e.zone ?? "?") ?? 0) + 1);
      out.set(zone, from);
    }
  }
  return out;
}

export const hasHints = (slices: readonly EndpointSlice[]) =>
  slices.some((s) => (s.endpoints ?? []).some((e) => e.hints !== undefined));

/**
 * The busiest endpoint's load relative to an even spread, if each zone sends traffic in proportion to its CPU (Auto's
 * own model) and its proxies keep it on the endpoints hinted for the zone; without hints, 1 (an even spread).
 */
export function worstLoad(ratios: ZoneRatios, slices: readonly EndpointSlice[]): number {
  const byZone = hintedByZone(slices);
  const ready = slices.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length;
  if (byZone.size === 0 || ready === 0) return 1;
  let worst = 0;
  for (const [zone, ratio] of Object.entries(ratios)) {
    const hinted = [...(byZone.get(zone)?.values() ?? [])].reduce((a, b) => a + b, 0);
    // A zone with no hinted endpoint falls back to all of them.
    const perEndpoint = hinted === 0 ? ratio / ready : ratio / hinted;
    worst = Math.max(worst, perEndpoint * ready);
  }
  return worst;
}

export function describeHinted(byZone: Map<string, Map<string, number>>): string {
  if (byZone.size === 0) return "no hints";
  return [...byZone]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([zone, from]) => `${zone} ← ${[...from].map(([z, n]) => `${n} from ${z}`).join(" + ")}`)
    .join("; ");
}
