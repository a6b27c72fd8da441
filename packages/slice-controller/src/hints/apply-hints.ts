import type { Service } from "kubernetes-types/core/v1.js";
import type { AddressType, EndpointSlice, ServiceEvent } from "../types.js";
import { hintsDisabledEvent, TOPOLOGY_AWARE_HINTS_DISABLED } from "./events.js";
import { removeHintsFromSlices } from "./slice-info.js";
import { hasPopulatedHints, removeServiceHints, type TopologyCacheState } from "./topology-cache.js";
import { addTopologyHints } from "./topology-hints.js";
import {
  reconcileTrafficDistributionHints,
  topologyHintsEnabled,
  validTrafficDistribution,
} from "./traffic-distribution.js";

export interface HintInput {
  service: Service;
  serviceKey: string;
  addressType: AddressType;
  toCreate: EndpointSlice[];
  toUpdate: EndpointSlice[];
  unchanged: readonly EndpointSlice[];
  /** Undefined when the topology cache (legacy Auto hints) is not in use. */
  topologyCache: TopologyCacheState | undefined;
  preferSameTrafficDistribution: boolean;
}

export interface HintOutput {
  toCreate: EndpointSlice[];
  toUpdate: EndpointSlice[];
  events: ServiceEvent[];
  topologyCache: TopologyCacheState | undefined;
}

/**
 * Decides which hint source applies to one address type and applies it. The legacy Auto annotation
 * wins over spec.trafficDistribution; with neither, hints are stripped. Turning Auto off emits one
 * TopologyAwareHintsDisabled event.
 */
export function applyHints(input: HintInput): HintOutput {
  const { service, serviceKey, addressType } = input;
  const auto = topologyHintsEnabled(service.metadata?.annotations);
  const mode = validTrafficDistribution(service, input.preferSameTrafficDistribution);
  const useTrafficDistribution = mode !== undefined && !auto;
  let { toCreate, toUpdate, topologyCache } = input;
  const events: ServiceEvent[] = [];
  const si = { serviceKey, addressType, toCreate, toUpdate, unchanged: input.unchanged };

  if (topologyCache !== undefined && auto) {
    const result = addTopologyHints(topologyCache, si);
    ({ toCreate, toUpdate } = result.si);
    events.push(...result.events);
    topologyCache = result.state;
  } else {
    if (topologyCache !== undefined) {
      if (hasPopulatedHints(topologyCache, serviceKey)) {
        events.push(hintsDisabledEvent(TOPOLOGY_AWARE_HINTS_DISABLED, addressType));
      }
      topologyCache = removeServiceHints(topologyCache, serviceKey, addressType);
    }
    if (!useTrafficDistribution) ({ toCreate, toUpdate } = removeHintsFromSlices(si));
  }

  if (useTrafficDistribution) {
    const updating = new Set(toUpdate.map((s) => s.metadata?.name));
    const unchanged = input.unchanged.filter((s) => !updating.has(s.metadata?.name));
    ({ toCreate, toUpdate } = reconcileTrafficDistributionHints(mode, toCreate, toUpdate, unchanged));
  }
  return { toCreate, toUpdate, events, topologyCache };
}

/** The topology label of endpointslices_changed_per_sync. */
export function topologyLabel(service: Service, cache: TopologyCacheState | undefined): "Auto" | "Disabled" {
  return cache !== undefined && topologyHintsEnabled(service.metadata?.annotations) ? "Auto" : "Disabled";
}
