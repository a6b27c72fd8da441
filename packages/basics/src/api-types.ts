/**
 * The Kubernetes API types Switchyard reads that are newer than the kubernetes-types it pins (v1.30), declared
 * once over v1.30's shapes. Type-only: nothing here exists at run time, so kubernetes-types is a devDependency
 * (for this package's build) and an optional peer (for the packages that use these types, which all depend on
 * it), never a dependency.
 */

import type {
  EndpointHints as EndpointHintsV130,
  EndpointSlice as EndpointSliceV130,
  Endpoint as EndpointV130,
} from "kubernetes-types/discovery/v1.js";
import type { Condition, ObjectMeta } from "kubernetes-types/meta/v1.js";

/** A node hint, added with PreferSameNode (discovery/v1, Kubernetes v1.33). */
export interface ForNode {
  name: string;
}

/** discovery/v1 EndpointHints as of v1.33: forNodes is new. */
export interface EndpointHints extends EndpointHintsV130 {
  forNodes?: ForNode[];
}

/** discovery/v1 Endpoint with v1.33's hints. */
export interface Endpoint extends Omit<EndpointV130, "hints"> {
  hints?: EndpointHints;
}

/** discovery/v1 EndpointSlice whose endpoints carry v1.33's hints. */
export interface EndpointSlice extends Omit<EndpointSliceV130, "endpoints"> {
  endpoints: Endpoint[];
}

/**
 * networking.k8s.io/v1 ServiceCIDR, GA in Kubernetes v1.33 (kubernetes-types 1.30 has only v1alpha1): the ranges
 * ClusterIPs are allocated from.
 */
export interface ServiceCIDR {
  apiVersion?: "networking.k8s.io/v1";
  kind?: "ServiceCIDR";
  metadata?: ObjectMeta;
  spec?: ServiceCIDRSpec;
  status?: ServiceCIDRStatus;
}

export interface ServiceCIDRSpec {
  /** At most two CIDRs, one per family. */
  cidrs?: string[];
}

export interface ServiceCIDRStatus {
  conditions?: Condition[];
}
