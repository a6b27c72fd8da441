// Which endpoints a Service's slices make ready, and which slice write carried a given change.
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { ChangeKind } from "./change.js";

/** Ready endpoint addresses across the slices (a missing ready condition counts as ready, as the proxy reads it). */
export function readyAddresses(slices: Iterable<EndpointSlice>): Set<string> {
  const out = new Set<string>();
  for (const s of slices)
    for (const e of s.endpoints ?? [])
      if (e.conditions?.ready ?? true) for (const a of e.addresses) out.add(a);
  return out;
}

/** The addresses that became ready and those that stopped being ready between two states of the slices. */
export function readyChanges(
  before: Iterable<EndpointSlice>,
  after: Iterable<EndpointSlice>,
): { added: string[]; removed: string[] } {
  const a = readyAddresses(before);
  const b = readyAddresses(after);
  return {
    added: [...b].filter((ip) => !a.has(ip)).sort(),
    removed: [...a].filter((ip) => !b.has(ip)).sort(),
  };
}

/** Whether the Service's slices, as they stand, show the change done. */
export function showsChange(slices: Iterable<EndpointSlice>, ip: string, kind: ChangeKind): boolean {
  return readyAddresses(slices).has(ip) === (kind === "added");
}

export const TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";
