// The issues' goals for our proxy, each a ratio to kube-proxy v1.37.2 in the same run and at the same size:
// to its own mode, and for ebpf mode (which upstream lacks) to its nftables mode. "at most" goals are met at
// or below the ratio, "at least" ones at or above it.
import type { Mode } from "./proxies.js";

export interface Goals {
  readonly fullSync?: number;
  readonly partialSync?: number;
  /** Both first-packet medians (Service #1 and the last Service). */
  readonly firstPacket?: number;
  /** At least: new connections per second through a ClusterIP. */
  readonly connectRate?: number;
  readonly peakRss: number;
}

export function goalsFor(mode: Mode, services: number): Goals {
  switch (mode) {
    case "ebpf":
      return { fullSync: 0.02, partialSync: 0.02, firstPacket: 0.8, connectRate: 1.2, peakRss: 1.0 };
    case "nftables":
      return { fullSync: services >= 10000 ? 0.2 : 0.5, partialSync: 0.25, peakRss: 1.5 };
    case "iptables-legacy":
      return { ...(services >= 10000 ? { partialSync: 0.6 } : {}), peakRss: 1.5 };
    case "iptables":
      return { peakRss: 1.5 };
  }
}

/** "full ≤ 0.5x: met"; "" where there is no goal or no ratio. */
export function atMost(what: string, ratio: number | undefined, goal: number | undefined): string {
  if (goal === undefined || ratio === undefined || !Number.isFinite(ratio)) return "";
  return `${what} ≤ ${goal}x: ${ratio <= goal ? "met" : "not met"}`;
}

export function atLeast(what: string, ratio: number | undefined, goal: number | undefined): string {
  if (goal === undefined || ratio === undefined || !Number.isFinite(ratio)) return "";
  return `${what} ≥ ${goal}x: ${ratio >= goal ? "met" : "not met"}`;
}
