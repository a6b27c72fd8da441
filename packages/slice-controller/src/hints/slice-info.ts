import type { AddressType, Endpoint, EndpointSlice } from "../types.js";

/**
 * The slices of one Service and address type on their way to the API, split by what will happen to
 * them. `toCreate` and `toUpdate` hold copies this library owns and may edit; `unchanged` holds the
 * caller's objects, which must be copied before any edit (and then move to `toUpdate`).
 */
export interface SliceInfo {
  serviceKey: string;
  addressType: AddressType;
  toCreate: EndpointSlice[];
  toUpdate: EndpointSlice[];
  unchanged: readonly EndpointSlice[];
}

export function isEndpointReady(endpoint: Endpoint): boolean {
  return endpoint.conditions?.ready === true;
}

/**
 * Strips hints everywhere: in place on the slices already being written, and on copies of unchanged
 * slices that carried any, which then join the updates.
 */
export function removeHintsFromSlices(si: SliceInfo): SliceInfo {
  for (const slice of [...si.toCreate, ...si.toUpdate]) {
    for (const endpoint of slice.endpoints) delete endpoint.hints;
  }
  const toUpdate = [...si.toUpdate];
  const unchanged: EndpointSlice[] = [];
  for (const slice of si.unchanged) {
    if (!slice.endpoints.some((e) => e.hints !== undefined)) {
      unchanged.push(slice);
      continue;
    }
    const copy = structuredClone(slice);
    for (const endpoint of copy.endpoints) delete endpoint.hints;
    toUpdate.push(copy);
  }
  return { ...si, toUpdate, unchanged };
}
