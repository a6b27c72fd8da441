import type { AddressType, ServiceEvent } from "../types.js";

// Messages of the TopologyAwareHints events, as upstream words them; users grep for these.
export const NO_ZONE_SPECIFIED = "One or more endpoints do not have a zone specified";
export const NO_ALLOCATED_HINTS_FOR_ZONES = "No hints allocated for zones";
export const TOPOLOGY_AWARE_HINTS_ENABLED = "Topology Aware Hints has been enabled";
export const TOPOLOGY_AWARE_HINTS_DISABLED = "Topology Aware Hints has been disabled";
export const INSUFFICIENT_NODE_INFO =
  "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes";
export const NODES_READY_IN_ONE_ZONE_ONLY = "Nodes only ready in one zone";
export const INSUFFICIENT_NUMBER_OF_ENDPOINTS = "Insufficient number of endpoints";
export const MIN_ALLOCATION_EXCEEDS_OVERLOAD_THRESHOLD =
  "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold";

export const REASON_HINTS_ENABLED = "TopologyAwareHintsEnabled";
export const REASON_HINTS_DISABLED = "TopologyAwareHintsDisabled";

export function withAddressType(message: string, addressType: AddressType): string {
  return `${message}, addressType: ${addressType}`;
}

export function hintsDisabledEvent(message: string, addressType: AddressType): ServiceEvent {
  return { type: "Warning", reason: REASON_HINTS_DISABLED, message: withAddressType(message, addressType) };
}

export function hintsEnabledEvent(addressType: AddressType): ServiceEvent {
  return {
    type: "Normal",
    reason: REASON_HINTS_ENABLED,
    message: withAddressType(TOPOLOGY_AWARE_HINTS_ENABLED, addressType),
  };
}
