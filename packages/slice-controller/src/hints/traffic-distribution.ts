import type { Service } from "kubernetes-types/core/v1.js";
import {
  ANNOTATION_TOPOLOGY_AWARE_HINTS,
  ANNOTATION_TOPOLOGY_MODE,
  TRAFFIC_DISTRIBUTION_PREFER_CLOSE,
  TRAFFIC_DISTRIBUTION_PREFER_SAME_NODE,
  TRAFFIC_DISTRIBUTION_PREFER_SAME_ZONE,
} from "../constants.js";
import type { Endpoint, EndpointHints, EndpointSlice } from "../types.js";
import { isEndpointReady } from "./slice-info.js";

/**
 * True when the Service asks for legacy Auto hints. The older annotation key wins when both are set,
 * even if its value turns them off.
 */
export function topologyHintsEnabled(annotations: Readonly<Record<string, string>> | undefined): boolean {
  const value = annotations?.[ANNOTATION_TOPOLOGY_AWARE_HINTS] ?? annotations?.[ANNOTATION_TOPOLOGY_MODE];
  return value === "Auto" || value === "auto";
}

/**
 * The Service's trafficDistribution if this controller honours it. PreferSameZone and PreferSameNode
 * depend on the PreferSameTrafficDistribution gate (GA and on by default since v1.35).
 */
export function validTrafficDistribution(service: Service, preferSameEnabled: boolean): string | undefined {
  const value = service.spec?.trafficDistribution;
  if (value === TRAFFIC_DISTRIBUTION_PREFER_CLOSE) return value;
  if (!preferSameEnabled) return undefined;
  if (value === TRAFFIC_DISTRIBUTION_PREFER_SAME_ZONE || value === TRAFFIC_DISTRIBUTION_PREFER_SAME_NODE)
    return value;
  return undefined;
}

/** The hints a ready endpoint should carry, or undefined for none. */
function closeHints(endpoint: Endpoint, withNodes: boolean): EndpointHints | undefined {
  const hints: EndpointHints = {};
  if (endpoint.zone !== undefined) hints.forZones = [{ name: endpoint.zone }];
  // Node hints come with zone hints so that proxies without PreferSameNode fall back to same-zone.
  if (withNodes && endpoint.nodeName !== undefined) hints.forNodes = [{ name: endpoint.nodeName }];
  return hints.forZones || hints.forNodes ? hints : undefined;
}

function sameHints(a: EndpointHints | undefined, b: EndpointHints | undefined): boolean {
  const names = (list: readonly { name: string }[] | undefined) =>
    (list ?? []).map((x) => x.name).join("\u0000");
  const count = (list: readonly unknown[] | undefined) => list?.length ?? 0;
  return (
    count(a?.forZones) === count(b?.forZones) &&
    names(a?.forZones) === names(b?.forZones) &&
    count(a?.forNodes) === count(b?.forNodes) &&
    names(a?.forNodes) === names(b?.forNodes)
  );
}

function needsUpdate(slice: EndpointSlice, mode: string | undefined): boolean {
  if (mode === undefined) return slice.endpoints.some((e) => e.hints !== undefined);
  const withNodes = mode === TRAFFIC_DISTRIBUTION_PREFER_SAME_NODE;
  return slice.endpoints.some((e) => isEndpointReady(e) && !sameHints(e.hints, closeHints(e, withNodes)));
}

function update(slice: EndpointSlice, mode: string | undefined): void {
  const withNodes = mode === TRAFFIC_DISTRIBUTION_PREFER_SAME_NODE;
  for (const endpoint of slice.endpoints) {
    if (mode === undefined) {
      delete endpoint.hints;
      continue;
    }
    if (!isEndpointReady(endpoint)) continue;
    const hints = closeHints(endpoint, withNodes);
    if (hints === undefined) delete endpoint.hints;
    else endpoint.hints = hints;
  }
}

/**
 * Hints from spec.trafficDistribution: each ready endpoint is hinted for its own zone (and, for
 * PreferSameNode, its own node); non-ready endpoints are left as they are. With no valid mode, all
 * hints are removed. Unchanged slices are rewritten only if some hint is missing, wrong or stale.
 */
export function reconcileTrafficDistributionHints(
  mode: string | undefined,
  toCreate: EndpointSlice[],
  toUpdate: EndpointSlice[],
  unchanged: readonly EndpointSlice[],
): { toCreate: EndpointSlice[]; toUpdate: EndpointSlice[]; unchanged: EndpointSlice[] } {
  const updates = [...toUpdate];
  const stillUnchanged: EndpointSlice[] = [];
  for (const slice of unchanged) {
    if (needsUpdate(slice, mode)) updates.push(structuredClone(slice));
    else stillUnchanged.push(slice);
  }
  for (const slice of [...toCreate, ...updates]) update(slice, mode);
  return { toCreate, toUpdate: updates, unchanged: stillUnchanged };
}
