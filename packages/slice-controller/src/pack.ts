import type { Service } from "kubernetes-types/core/v1.js";
import { type EndpointSet, endpointsEqualBeyondKey } from "./endpoint-set.js";
import { newEndpointSlice, sliceLabels } from "./slice-meta.js";
import type { AddressType, EndpointPort, EndpointSlice } from "./types.js";

/** One port-map group of one address type: the slices it has and the endpoints it should have. */
export interface PortGroup {
  service: Service;
  addressType: AddressType;
  ports: readonly EndpointPort[];
  existing: readonly EndpointSlice[];
  desired: EndpointSet;
  maxEndpointsPerSlice: number;
  controllerName: string;
}

export interface PackResult {
  toCreate: EndpointSlice[];
  toUpdate: EndpointSlice[];
  toDelete: EndpointSlice[];
  /** Endpoints placed that no existing slice held. */
  added: number;
  /** Endpoints dropped from existing slices. */
  removed: number;
  /** Endpoints kept in place whose contents changed. */
  updated: number;
}

/**
 * Of the slices nobody is touching yet, the one that would be fullest after taking all `count`
 * endpoints; undefined when none has room for all of them.
 */
export function sliceToFill(
  candidates: readonly EndpointSlice[],
  count: number,
  maxEndpointsPerSlice: number,
): EndpointSlice | undefined {
  let closestGap = maxEndpointsPerSlice;
  let closest: EndpointSlice | undefined;
  for (const slice of candidates) {
    const gap = maxEndpointsPerSlice - (count + slice.endpoints.length);
    if (gap >= 0 && gap < closestGap) {
      closestGap = gap;
      closest = slice;
      if (gap === 0) break;
    }
  }
  return closest;
}

function fill(slice: EndpointSlice, desired: EndpointSet, max: number): void {
  while (desired.size > 0 && slice.endpoints.length < max) {
    const endpoint = desired.pop();
    if (endpoint !== undefined) slice.endpoints.push(endpoint);
  }
}

/**
 * Upstream's packing for one group. It minimises writes, not slices: it never rebalances or merges
 * partly filled slices, and prefers one create over topping up several untouched slices.
 *
 * 1. Walk the existing slices: keep each endpoint that is still desired (in its desired form), drop
 *    the rest. A slice left empty is deleted; one that lost or changed endpoints, or whose Service
 *    labels drifted, is updated; any other is unchanged.
 * 2. Top up the slices already being updated, fullest first.
 * 3. Put what remains into the unchanged slice that ends closest to full if all of it fits there,
 *    otherwise into new slices, until nothing remains.
 *
 * `group.desired` is consumed. Existing slices are copied before any change.
 */
export function packPortGroup(group: PortGroup): PackResult {
  const { service, desired, maxEndpointsPerSlice: max, controllerName } = group;
  const current = new Map<string, EndpointSlice>();
  const unchanged = new Set<string>();
  const toUpdate = new Set<string>();
  const toDelete = new Set<string>();
  let removed = 0;
  let updated = 0;

  // 1.
  for (const existing of group.existing) {
    const name = existing.metadata?.name ?? "";
    current.set(name, existing);
    const kept = [];
    let changed = false;
    for (const endpoint of existing.endpoints) {
      const wanted = desired.get(endpoint);
      if (wanted === undefined) continue;
      kept.push(wanted);
      if (!endpointsEqualBeyondKey(wanted, endpoint)) {
        changed = true;
        updated++;
      }
      desired.delete(endpoint);
    }
    const labels = sliceLabels(existing, service, controllerName);
    if (changed || kept.length !== existing.endpoints.length) {
      removed += Math.max(0, existing.endpoints.length - kept.length);
      if (kept.length === 0) {
        toDelete.add(name);
        continue;
      }
      const copy = structuredClone(existing);
      copy.endpoints = kept;
      copy.metadata = { ...copy.metadata, labels: labels.labels };
      current.set(name, copy);
      toUpdate.add(name);
    } else if (labels.changed) {
      const copy = structuredClone(existing);
      copy.metadata = { ...copy.metadata, labels: labels.labels };
      current.set(name, copy);
      toUpdate.add(name);
    } else {
      unchanged.add(name);
    }
  }

  const added = desired.size;

  // 2.
  if (desired.size > 0 && toUpdate.size > 0) {
    const byFullness = [...toUpdate]
      .map((name) => current.get(name))
      .filter((s): s is EndpointSlice => s !== undefined)
      .sort((a, b) => b.endpoints.length - a.endpoints.length);
    for (const slice of byFullness) fill(slice, desired, max);
  }

  // 3.
  const toCreate: EndpointSlice[] = [];
  while (desired.size > 0) {
    let target: EndpointSlice | undefined;
    if (desired.size < max && unchanged.size > 0) {
      const candidates = [...unchanged].map((name) => current.get(name)).filter((s) => s !== undefined);
      const found = sliceToFill(candidates, desired.size, max);
      if (found !== undefined) {
        target = structuredClone(found);
        current.set(target.metadata?.name ?? "", target);
      }
    }
    target ??= newEndpointSlice(service, group.ports, group.addressType, controllerName);
    fill(target, desired, max);
    const name = target.metadata?.name ?? "";
    if (name !== "") {
      toUpdate.add(name);
      unchanged.delete(name);
    } else {
      toCreate.push(target);
    }
  }

  const pick = (names: Set<string>) =>
    [...names].map((name) => current.get(name)).filter((s): s is EndpointSlice => s !== undefined);
  return { toCreate, toUpdate: pick(toUpdate), toDelete: pick(toDelete), added, removed, updated };
}
