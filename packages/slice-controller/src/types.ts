import type { EndpointSlice } from "@switchyard/basics";
import type { ObjectReference } from "kubernetes-types/core/v1.js";

// kubernetes-types is pinned at v1.30; the slice types with the fields that arrived later are basics'.
export type { Endpoint, EndpointHints, EndpointSlice, ForNode } from "@switchyard/basics";

export type AddressType = "IPv4" | "IPv6";

/** Address types in the order this library reconciles them, so output order is stable. */
export const ADDRESS_TYPES: readonly AddressType[] = ["IPv4", "IPv6"];

export type EndpointPort = NonNullable<EndpointSlice["ports"]>[number];

export type TargetRef = ObjectReference;

/**
 * An Event the shell should record on the Service. Events are returned rather than emitted so that
 * reconcile stays pure; `type` and `reason` are the Kubernetes Event fields.
 */
export interface ServiceEvent {
  type: "Normal" | "Warning";
  reason: string;
  message: string;
}
