import type { EndpointSlice, ServiceEvent } from "../types.js";
import {
  hintsDisabledEvent,
  hintsEnabledEvent,
  NO_ALLOCATED_HINTS_FOR_ZONES,
  NO_ZONE_SPECIFIED,
} from "./events.js";
import { isEndpointReady, removeHintsFromSlices, type SliceInfo } from "./slice-info.js";
import {
  type Allocation,
  allocate,
  hasPopulatedHints,
  removeServiceHints,
  setServiceHints,
  type TopologyCacheState,
} from "./topology-cache.js";

export interface HintsResult {
  si: SliceInfo;
  events: ServiceEvent[];
  state: TopologyCacheState;
}

type Allocations = ReadonlyMap<string, Allocation>;

/**
 * Hints per zone an unchanged slice already carries, or undefined when the slice must be rewritten:
 * a ready endpoint without zone hints, a hint for a zone that gets no allocation, or more hints for
 * a zone than its maximum allows on top of what is already counted.
 */
export function hintsByZone(
  slice: EndpointSlice,
  counted: ReadonlyMap<string, number>,
  allocations: Allocations,
): Map<string, number> | undefined {
  const byZone = new Map<string, number>();
  for (const endpoint of slice.endpoints) {
    if (!isEndpointReady(endpoint)) continue;
    const zones = endpoint.hints?.forZones ?? [];
    if (zones.length === 0) return undefined;
    for (const { name } of zones) {
      if (!allocations.has(name)) return undefined;
      byZone.set(name, (byZone.get(name) ?? 0) + 1);
    }
  }
  for (const [zone, n] of byZone) {
    const maximum = allocations.get(zone)?.maximum ?? 0;
    if (n + (counted.get(zone) ?? 0) > maximum) return undefined;
  }
  return byZone;
}

function largest(amounts: ReadonlyMap<string, number>): [string, number] {
  let best: [string, number] = ["", 0];
  for (const [zone, n] of amounts) if (n > best[1]) best = [zone, n];
  return best;
}

/**
 * Whole endpoints each zone should give away and receive so that every zone reaches its desired
 * share. Fractions are settled greedily, largest first, stopping once both sides are below one or
 * either side is below one half.
 */
export function givingAndReceiving(
  allocations: Allocations,
  allocated: ReadonlyMap<string, number>,
): { giving: Map<string, number>; receiving: Map<string, number> } {
  const toGive = new Map<string, number>();
  const toReceive = new Map<string, number>();
  for (const [zone, { desired }] of allocations) {
    const have = allocated.get(zone) ?? 0;
    if (have > desired) toGive.set(zone, have - desired);
    else if (have < desired) toReceive.set(zone, desired - have);
  }
  const giving = new Map<string, number>();
  const receiving = new Map<string, number>();
  for (;;) {
    const [from, give] = largest(toGive);
    const [to, receive] = largest(toReceive);
    if (from === "" || to === "" || (give < 1 && receive < 1) || give < 0.5 || receive < 0.5) break;
    giving.set(from, (giving.get(from) ?? 0) + 1);
    toGive.set(from, give - 1);
    receiving.set(to, (receiving.get(to) ?? 0) + 1);
    toReceive.set(to, receive - 1);
  }
  return { giving, receiving };
}

/** Re-points ready endpoints of giving zones at receiving zones; returns the change per zone. */
function redistribute(
  slices: readonly EndpointSlice[],
  giving: Map<string, number>,
  receiving: Map<string, number>,
): Map<string, number> {
  const change = new Map<string, number>();
  for (const slice of slices) {
    for (const endpoint of slice.endpoints) {
      if (!isEndpointReady(endpoint)) continue;
      if (giving.size === 0 || receiving.size === 0) return change;
      const from = endpoint.zone ?? "";
      if ((giving.get(from) ?? 0) <= 0) continue;
      const to = [...receiving].find(([, n]) => n > 0)?.[0];
      if (to === undefined) continue;
      endpoint.hints = { forZones: [{ name: to }] };
      const left = (giving.get(from) ?? 0) - 1;
      if (left === 0) giving.delete(from);
      else giving.set(from, left);
      const need = (receiving.get(to) ?? 0) - 1;
      if (need === 0) receiving.delete(to);
      else receiving.set(to, need);
      change.set(to, (change.get(to) ?? 0) + 1);
      change.set(from, (change.get(from) ?? 0) - 1);
    }
  }
  return change;
}

function disable(
  si: SliceInfo,
  state: TopologyCacheState,
  events: ServiceEvent[],
  message: string,
): HintsResult {
  return {
    si: removeHintsFromSlices(si),
    events: [...events, hintsDisabledEvent(message, si.addressType)],
    state: removeServiceHints(state, si.serviceKey, si.addressType),
  };
}

/**
 * Legacy Topology Aware Routing (`topology-mode: Auto`). Every ready endpoint is first hinted for its
 * own zone; zones holding more than their CPU share then donate endpoints to zones below it. Unchanged
 * slices whose hints still fit the allocation are left alone to avoid churn. When no safe allocation
 * exists, all hints are removed and a TopologyAwareHintsDisabled event says why.
 */
export function addTopologyHints(state: TopologyCacheState, input: SliceInfo): HintsResult {
  const all = [...input.toCreate, ...input.toUpdate, ...input.unchanged];
  const totalReady = all.reduce((sum, s) => sum + s.endpoints.filter(isEndpointReady).length, 0);
  const result = allocate(state, totalReady);
  if (!result.ok) return disable(input, state, [], result.message);
  const { allocations } = result;

  const allocated = new Map<string, number>();
  const toUpdate = [...input.toUpdate];
  const unchanged: EndpointSlice[] = [];
  for (const slice of input.unchanged) {
    const fits = hintsByZone(slice, allocated, allocations);
    if (fits === undefined) {
      toUpdate.push(structuredClone(slice));
      continue;
    }
    unchanged.push(slice);
    for (const [zone, n] of fits) allocated.set(zone, (allocated.get(zone) ?? 0) + n);
  }
  const si: SliceInfo = { ...input, toUpdate, unchanged };
  const writable = [...si.toCreate, ...si.toUpdate];

  for (const slice of writable) {
    for (const endpoint of slice.endpoints) {
      // Upstream leaves non-ready endpoints' hints as they were.
      if (!isEndpointReady(endpoint)) continue;
      if (endpoint.zone === undefined || endpoint.zone === "")
        return disable(si, state, [], NO_ZONE_SPECIFIED);
      allocated.set(endpoint.zone, (allocated.get(endpoint.zone) ?? 0) + 1);
      endpoint.hints = { forZones: [{ name: endpoint.zone }] };
    }
  }

  const { giving, receiving } = givingAndReceiving(allocations, allocated);
  for (const [zone, diff] of redistribute(writable, giving, receiving)) {
    allocated.set(zone, (allocated.get(zone) ?? 0) + diff);
  }
  if (allocated.size === 0) return disable(si, state, [], NO_ALLOCATED_HINTS_FOR_ZONES);

  const events = hasPopulatedHints(state, si.serviceKey) ? [] : [hintsEnabledEvent(si.addressType)];
  const byZone = Object.fromEntries([...allocated].sort(([a], [b]) => (a < b ? -1 : 1)));
  return { si, events, state: setServiceHints(state, si.serviceKey, si.addressType, byZone) };
}
