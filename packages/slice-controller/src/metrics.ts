import type { AddressType } from "./types.js";

/** Endpoints and slices of one port-map group after the planned writes. */
export interface GroupEfficiency {
  endpoints: number;
  slices: number;
}

/**
 * What one reconcile contributes to the `endpoint_slice_controller_*` metrics, as data for the shell
 * to observe. Gauges are per Service; the shell sums them over Services.
 */
export interface ReconcileMetrics {
  /** endpoints_added_per_sync / endpoints_removed_per_sync: one observation per address type. */
  perAddressType: { addressType: AddressType; added: number; removed: number; updated: number }[];
  endpointsAdded: number;
  endpointsRemoved: number;
  /** Endpoints kept in place whose conditions, node, zone or target changed. */
  endpointsUpdated: number;
  /** endpoints_desired for this Service. */
  endpointsDesired: number;
  /** num_endpoint_slices for this Service once the plan is applied. */
  numEndpointSlices: number;
  /** desired_endpoint_slices: per port group ceil(endpoints / max), at least 1 for the Service. */
  desiredEndpointSlices: number;
  /** Ours: numEndpointSlices / desiredEndpointSlices; 1 is perfectly packed. */
  fragmentationRatio: number;
  /** Label values for endpointslices_changed_per_sync. */
  topology: "Auto" | "Disabled";
  trafficDistribution: string;
}

function desiredSlices(endpoints: number, max: number): number {
  return endpoints === 0 ? 0 : Math.ceil(endpoints / max);
}

/**
 * Totals over the port groups of all address types. Upstream keeps one cache entry per Service and
 * overwrites it per address type, so its gauges count only the last family of a dual-stack Service;
 * here both are counted.
 */
export function efficiencyTotals(
  groups: readonly GroupEfficiency[],
  max: number,
): Pick<
  ReconcileMetrics,
  "endpointsDesired" | "numEndpointSlices" | "desiredEndpointSlices" | "fragmentationRatio"
> {
  let endpoints = 0;
  let slices = 0;
  let desired = 0;
  for (const group of groups) {
    endpoints += group.endpoints;
    slices += group.slices;
    desired += desiredSlices(group.endpoints, max);
  }
  desired = Math.max(desired, 1);
  return {
    endpointsDesired: endpoints,
    numEndpointSlices: slices,
    desiredEndpointSlices: desired,
    fragmentationRatio: slices / desired,
  };
}
