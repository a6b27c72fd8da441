import type { EventHandler } from "@switchyard/kube";
import {
  type EndpointSlice,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  shouldSync,
  trackerHandleDeletion,
  trackerHas,
} from "@switchyard/slice-controller";
import type { TrackerRef } from "./apply.js";

export interface SliceEventOptions {
  /** The managed-by value of the slices this controller writes. */
  managedBy: string;
  tracker: TrackerRef;
  /** Queues the owning Service ("namespace/name"). */
  enqueue(serviceKey: string): void;
}

function serviceKey(slice: EndpointSlice): string | undefined {
  const name = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
  return name ? `${slice.metadata?.namespace ?? ""}/${name}` : undefined;
}

/**
 * Informer handlers for EndpointSlices. Echoes of our own writes are filtered through the tracker;
 * anything else that touches a slice we manage (someone edits or deletes it, or relabels it away)
 * syncs the Service so the slice is put back the way the Pods say.
 */
export function sliceEventHandler(o: SliceEventOptions): EventHandler<EndpointSlice> {
  const managed = (s: EndpointSlice) => s.metadata?.labels?.[LABEL_MANAGED_BY] === o.managedBy;
  const enqueue = (s: EndpointSlice) => {
    const key = serviceKey(s);
    if (key !== undefined) o.enqueue(key);
  };
  return {
    onAdd(slice) {
      if (managed(slice) && shouldSync(o.tracker.value, slice)) enqueue(slice);
    },
    onUpdate(oldSlice, slice) {
      if (serviceKey(oldSlice) !== serviceKey(slice)) {
        enqueue(oldSlice);
        enqueue(slice);
        return;
      }
      const managedByChanged = managed(oldSlice) !== managed(slice);
      if (managedByChanged || (managed(slice) && shouldSync(o.tracker.value, slice))) enqueue(slice);
    },
    onDelete(slice) {
      if (!managed(slice) || !trackerHas(o.tracker.value, slice)) return;
      const { tracker, expected } = trackerHandleDeletion(o.tracker.value, slice);
      o.tracker.value = tracker;
      if (!expected) enqueue(slice);
    },
  };
}
