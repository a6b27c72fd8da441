import {
  CONTROLLER_NAME,
  DEFAULT_MAX_ENDPOINTS_PER_SLICE,
  MAX_MAX_ENDPOINTS_PER_SLICE,
  MIN_MAX_ENDPOINTS_PER_SLICE,
} from "./constants.js";

export interface ReconcileOptions {
  /** Endpoints per slice before another is started; 1..1000, default 100 (--max-endpoints-per-slice). */
  maxEndpointsPerSlice?: number;
  /**
   * Accept PreferSameZone and PreferSameNode (the PreferSameTrafficDistribution gate). Default true:
   * the gate is GA since v1.35. PreferClose is honoured either way.
   */
  preferSameTrafficDistribution?: boolean;
  /** The managed-by label value; default endpointslice-controller.k8s.io. */
  controllerName?: string;
}

export type ResolvedOptions = Required<ReconcileOptions>;

/** Fills in defaults and rejects a maxEndpointsPerSlice kube-controller-manager would reject. */
export function resolveOptions(options: ReconcileOptions = {}): ResolvedOptions {
  const max = options.maxEndpointsPerSlice ?? DEFAULT_MAX_ENDPOINTS_PER_SLICE;
  if (!Number.isInteger(max) || max < MIN_MAX_ENDPOINTS_PER_SLICE || max > MAX_MAX_ENDPOINTS_PER_SLICE) {
    throw new RangeError(
      `maxEndpointsPerSlice must be an integer in ${MIN_MAX_ENDPOINTS_PER_SLICE}..${MAX_MAX_ENDPOINTS_PER_SLICE}, got ${max}`,
    );
  }
  return {
    maxEndpointsPerSlice: max,
    preferSameTrafficDistribution: options.preferSameTrafficDistribution ?? true,
    controllerName: options.controllerName ?? CONTROLLER_NAME,
  };
}
