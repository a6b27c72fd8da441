import { ANNOTATION_LAST_CHANGE_TRIGGER_TIME } from "./constants.js";
import type { EndpointSlice } from "./types.js";

/**
 * Formats a time as Go's RFC3339Nano in UTC: fractional seconds without trailing zeros, none at all
 * for a whole second. kube-proxy parses this for its network-programming-latency metric.
 */
export function formatRFC3339Nano(time: Date): string {
  const iso = time.toISOString();
  const [whole = "", fraction = ""] = iso.slice(0, -1).split(".");
  const trimmed = fraction.replace(/0+$/, "");
  return trimmed === "" ? `${whole}Z` : `${whole}.${trimmed}Z`;
}

/**
 * Returns the slice with the last-change-trigger-time annotation set to `triggerTime`, or removed
 * when there is none. The slice is modified in place; callers pass copies they own.
 */
export function applyTriggerTime(slice: EndpointSlice, triggerTime: Date | undefined): EndpointSlice {
  const metadata = slice.metadata ?? {};
  const annotations = { ...(metadata.annotations ?? {}) };
  if (triggerTime !== undefined) {
    annotations[ANNOTATION_LAST_CHANGE_TRIGGER_TIME] = formatRFC3339Nano(triggerTime);
  } else {
    delete annotations[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
  }
  slice.metadata = { ...metadata, annotations };
  return slice;
}
