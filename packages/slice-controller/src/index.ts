export { parseMilliQuantity } from "@switchyard/basics";
export { addressTypesForService, isHeadless } from "./address-family.js";
export * from "./constants.js";
export { endpointKey, endpointsEqualBeyondKey } from "./endpoint-set.js";
export {
  type FinalizeContext,
  type FinalizeResult,
  finalize,
  type PlannedWrites,
  type SliceOperation,
} from "./finalize.js";
export * from "./hints/events.js";
export {
  type Allocation,
  type AllocationResult,
  allocate,
  EMPTY_TOPOLOGY_CACHE,
  type EndpointsByZone,
  hasPopulatedHints,
  OVERLOAD_THRESHOLD,
  overloadedServices,
  removeServiceHints,
  setTopologyNodes,
  type TopologyCacheState,
} from "./hints/topology-cache.js";
export { addTopologyHints, givingAndReceiving } from "./hints/topology-hints.js";
export {
  reconcileTrafficDistributionHints,
  topologyHintsEnabled,
  validTrafficDistribution,
} from "./hints/traffic-distribution.js";
export type { ReconcileMetrics } from "./metrics.js";
export {
  ANNOTATION_LEADER_ELECTION,
  DEFAULT_MAX_ENDPOINTS_PER_SUBSET,
  LABEL_SKIP_MIRROR,
  type MirrorInput,
  type MirrorPlan,
  mirrorEndpoints,
  shouldMirror,
} from "./mirroring.js";
export { type ReconcileOptions, resolveOptions } from "./options.js";
export { isPodReady, podToEndpoint, shouldPodBeInEndpoints, shouldSetHostname } from "./pod-endpoint.js";
export { endpointPortsFor, findPort, portMapKey } from "./ports.js";
export { type NodeLookup, type ReconcileInput, type ReconcilePlan, reconcile } from "./reconcile.js";
export {
  newEndpointSlice,
  ownedBy,
  serviceOwnerReference,
  sliceLabels,
  sliceNamePrefix,
} from "./slice-meta.js";
export {
  DELETION_EXPECTED,
  EMPTY_TRACKER,
  type SliceTracker,
  shouldSync,
  staleSlices,
  trackerDeleteService,
  trackerExpectDeletion,
  trackerHandleDeletion,
  trackerHas,
  trackerUpdate,
} from "./tracker.js";
export { applyTriggerTime, formatRFC3339Nano } from "./trigger-time.js";
export type {
  AddressType,
  Endpoint,
  EndpointHints,
  EndpointPort,
  EndpointSlice,
  ForNode,
  ServiceEvent,
} from "./types.js";
