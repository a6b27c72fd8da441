import { parseMilliQuantity } from "@switchyard/basics";
import type { Node } from "kubernetes-types/core/v1.js";
import { LABEL_TOPOLOGY_ZONE } from "../constants.js";
import type { AddressType } from "../types.js";
import {
  INSUFFICIENT_NODE_INFO,
  INSUFFICIENT_NUMBER_OF_ENDPOINTS,
  MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD,
  NODES_READY_IN_ONE_ZONE_ONLY,
} from "./events.js";

/** How much more traffic than its fair share any endpoint may be asked to take (20%). */
export const OVERLOAD_THRESHOLD = 0.2;

/** Hinted endpoints per zone. */
export type EndpointsByZone = Readonly<Record<string, number>>;

/**
 * What the legacy Topology Aware Routing needs to remember between reconciles, as a value: the
 * cluster's CPU share per zone (from Nodes) and, per Service, the hints it last published. Every
 * function here returns a new state instead of changing the one it was given.
 */
export interface TopologyCacheState {
  /** Share of allocatable CPU per zone; null when Node information is insufficient. */
  readonly cpuRatiosByZone: Readonly<Record<string, number>> | null;
  /** Last published hints, by Service key ("namespace/name") and address type. */
  readonly endpointsByService: Readonly<Record<string, Partial<Record<AddressType, EndpointsByZone>>>>;
  /** Service keys whose slices currently carry Auto hints; drives the Enabled/Disabled events. */
  readonly hintsPopulated: readonly string[];
}

/** The state before any Node has been seen. Upstream starts with an empty, not a missing, ratio map. */
export const EMPTY_TOPOLOGY_CACHE: TopologyCacheState = {
  cpuRatiosByZone: {},
  endpointsByService: {},
  hintsPopulated: [],
};

function isNodeReady(node: Node): boolean {
  const ready = node.status?.conditions?.find((c) => c.type === "Ready");
  return ready?.status === "True";
}

function isControlPlane(node: Node): boolean {
  const labels = node.metadata?.labels ?? {};
  return "node-role.kubernetes.io/control-plane" in labels || "node-role.kubernetes.io/master" in labels;
}

/**
 * Recomputes the CPU share per zone from the Nodes. Control-plane and not-Ready Nodes are ignored.
 * One eligible Node without a zone or allocatable CPU, or fewer than two zones, clears the ratios,
 * which turns Auto hints off for every Service.
 */
export function setTopologyNodes(state: TopologyCacheState, nodes: readonly Node[]): TopologyCacheState {
  const cpuByZone = new Map<string, number>();
  let total = 0;
  for (const node of nodes) {
    if (isControlPlane(node) || !isNodeReady(node)) continue;
    const zone = node.metadata?.labels?.[LABEL_TOPOLOGY_ZONE] ?? "";
    const cpu = parseMilliQuantity(node.status?.allocatable?.cpu) ?? 0;
    if (zone === "" || cpu === 0) return { ...state, cpuRatiosByZone: null };
    total += cpu;
    cpuByZone.set(zone, (cpuByZone.get(zone) ?? 0) + cpu);
  }
  if (total === 0 || cpuByZone.size < 2) return { ...state, cpuRatiosByZone: null };
  const ratios: Record<string, number> = {};
  for (const [zone, cpu] of [...cpuByZone].sort(([a], [b]) => (a < b ? -1 : 1))) ratios[zone] = cpu / total;
  return { ...state, cpuRatiosByZone: ratios };
}

/** How many endpoints a zone should get: at least `minimum`, aim for `desired`, never above `maximum`. */
export interface Allocation {
  minimum: number;
  maximum: number;
  desired: number;
}

export type AllocationResult =
  | { ok: true; allocations: ReadonlyMap<string, Allocation> }
  | { ok: false; message: string };

/**
 * Splits `numEndpoints` ready endpoints across zones in proportion to CPU. A zone's minimum is its
 * proportional share shrunk by the overload threshold, rounded up; if the minima do not fit, no
 * allocation is possible. The endpoints left after every minimum may go to any one zone.
 */
export function allocate(state: TopologyCacheState, numEndpoints: number): AllocationResult {
  const ratios = state.cpuRatiosByZone;
  if (ratios === null) return { ok: false, message: INSUFFICIENT_NODE_INFO };
  const zones = Object.keys(ratios).sort();
  if (zones.length < 2) return { ok: false, message: NODES_READY_IN_ONE_ZONE_ONLY };
  const counts = `(${numEndpoints} endpoints, ${zones.length} zones)`;
  if (zones.length > numEndpoints)
    return { ok: false, message: `${INSUFFICIENT_NUMBER_OF_ENDPOINTS} ${counts}` };

  const partial = new Map<string, { minimum: number; desired: number }>();
  let minTotal = 0;
  for (const zone of zones) {
    const desired = (ratios[zone] ?? 0) * numEndpoints;
    const minimum = Math.ceil(desired * (1 / (1 + OVERLOAD_THRESHOLD)));
    partial.set(zone, { minimum, desired: Math.max(desired, minimum) });
    minTotal += minimum;
  }
  if (minTotal > numEndpoints)
    return { ok: false, message: `${MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD} ${counts}` };

  const allocations = new Map<string, Allocation>();
  for (const [zone, { minimum, desired }] of partial) {
    allocations.set(zone, { minimum, desired, maximum: minimum + numEndpoints - minTotal });
  }
  return { ok: true, allocations };
}

export function hasPopulatedHints(state: TopologyCacheState, serviceKey: string): boolean {
  return state.hintsPopulated.includes(serviceKey);
}

export function setServiceHints(
  state: TopologyCacheState,
  serviceKey: string,
  addressType: AddressType,
  byZone: EndpointsByZone,
): TopologyCacheState {
  return {
    ...state,
    endpointsByService: {
      ...state.endpointsByService,
      [serviceKey]: { ...state.endpointsByService[serviceKey], [addressType]: { ...byZone } },
    },
    hintsPopulated: hasPopulatedHints(state, serviceKey)
      ? state.hintsPopulated
      : [...state.hintsPopulated, serviceKey],
  };
}

/**
 * Forgets one address type's hints for a Service. Like upstream, the Service as a whole is then no
 * longer "populated", even if its other family still has hints.
 */
export function removeServiceHints(
  state: TopologyCacheState,
  serviceKey: string,
  addressType: AddressType,
): TopologyCacheState {
  const { [serviceKey]: byType, ...others } = state.endpointsByService;
  const remaining = { ...byType };
  delete remaining[addressType];
  return {
    ...state,
    endpointsByService: Object.keys(remaining).length > 0 ? { ...others, [serviceKey]: remaining } : others,
    hintsPopulated: state.hintsPopulated.filter((key) => key !== serviceKey),
  };
}

function serviceOverloaded(
  byZone: EndpointsByZone,
  ratios: Readonly<Record<string, number>> | null,
): boolean {
  if (Object.keys(byZone).length === 0) return false;
  if (ratios === null || Object.keys(ratios).length === 0) return true;
  const total = Object.values(byZone).reduce((sum, n) => sum + n, 0);
  return Object.entries(ratios).some(([zone, ratio]) => {
    const have = byZone[zone];
    return have === undefined || have < Math.ceil(total * ratio * (1 / (1 + OVERLOAD_THRESHOLD)));
  });
}

/**
 * Services whose published hints leave some zone below its minimum under the current Node ratios;
 * the shell requeues them after a Node change.
 */
export function overloadedServices(state: TopologyCacheState): string[] {
  return Object.entries(state.endpointsByService)
    .filter(([, byType]) =>
      Object.values(byType).some(
        (byZone) => byZone !== undefined && serviceOverloaded(byZone, state.cpuRatiosByZone),
      ),
    )
    .map(([key]) => key);
}
