import type { ObjectReference } from "kubernetes-types/core/v1.js";
import type {
  EndpointHints as EndpointHintsV130,
  EndpointSlice as EndpointSliceV130,
  Endpoint as EndpointV130,
} from "kubernetes-types/discovery/v1.js";

// kubernetes-types is pinned at v1.30; these add the fields that arrived later.

/** A node hint, added with PreferSameNode (Kubernetes v1.33). */
export interface ForNode {
  name: string;
}

export interface EndpointHints extends EndpointHintsV130 {
  forNodes?: ForNode[];
}

export interface Endpoint extends Omit<EndpointV130, "hints"> {
  hints?: EndpointHints;
}

export interface EndpointSlice extends Omit<EndpointSliceV130, "endpoints"> {
  endpoints: Endpoint[];
}

export type AddressType = "IPv4" | "IPv6";

/** Address types in the order this library reconciles them, so output order is stable. */
export const ADDRESS_TYPES: readonly AddressType[] = ["IPv4", "IPv6"];

export type EndpointPort = NonNullable<EndpointSliceV130["ports"]>[number];

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
