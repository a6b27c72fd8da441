/** Names shared with upstream Kubernetes; they are API, so they must match byte for byte. */

export const LABEL_SERVICE_NAME = "kubernetes.io/service-name";
export const LABEL_MANAGED_BY = "endpointslice.kubernetes.io/managed-by";
export const LABEL_HEADLESS = "service.kubernetes.io/headless";
export const LABEL_TOPOLOGY_ZONE = "topology.kubernetes.io/zone";

/** Value of the managed-by label on slices this controller owns. */
export const CONTROLLER_NAME = "endpointslice-controller.k8s.io";
/** Value of the managed-by label on slices the mirroring controller owns. */
export const MIRRORING_CONTROLLER_NAME = "endpointslicemirroring-controller.k8s.io";

export const ANNOTATION_LAST_CHANGE_TRIGGER_TIME = "endpoints.kubernetes.io/last-change-trigger-time";
export const ANNOTATION_TOPOLOGY_MODE = "service.kubernetes.io/topology-mode";
/** Older spelling of the topology mode annotation; when both are present this one wins. */
export const ANNOTATION_TOPOLOGY_AWARE_HINTS = "service.kubernetes.io/topology-aware-hints";

export const DEFAULT_MAX_ENDPOINTS_PER_SLICE = 100;
export const MIN_MAX_ENDPOINTS_PER_SLICE = 1;
export const MAX_MAX_ENDPOINTS_PER_SLICE = 1000;

export const TRAFFIC_DISTRIBUTION_PREFER_CLOSE = "PreferClose";
export const TRAFFIC_DISTRIBUTION_PREFER_SAME_ZONE = "PreferSameZone";
export const TRAFFIC_DISTRIBUTION_PREFER_SAME_NODE = "PreferSameNode";
