import { LABEL_SERVICE_NAME } from "./constants.js";

/** Generation recorded for a slice this controller deleted and expects to see disappear. */
export const DELETION_EXPECTED = -1;

/**
 * Per Service ("namespace/name"), the generation of every slice this controller last wrote, keyed
 * by slice UID. A value: every function returns a new tracker.
 */
export type SliceTracker = Readonly<Record<string, Readonly<Record<string, number>>>>;

export const EMPTY_TRACKER: SliceTracker = {};

interface TrackedSlice {
  metadata?: {
    uid?: string;
    namespace?: string;
    generation?: number;
    labels?: Record<string, string>;
    deletionTimestamp?: string;
  };
}

function serviceKeyOf(slice: TrackedSlice): string {
  return `${slice.metadata?.namespace ?? ""}/${slice.metadata?.labels?.[LABEL_SERVICE_NAME] ?? ""}`;
}

function record(tracker: SliceTracker, slice: TrackedSlice, generation: number): SliceTracker {
  const key = serviceKeyOf(slice);
  return { ...tracker, [key]: { ...tracker[key], [slice.metadata?.uid ?? ""]: generation } };
}

/** True when the tracker has an entry (written or deletion expected) for the slice. */
export function trackerHas(tracker: SliceTracker, slice: TrackedSlice): boolean {
  return tracker[serviceKeyOf(slice)]?.[slice.metadata?.uid ?? ""] !== undefined;
}

/** Records a slice as returned by a create or update. */
export function trackerUpdate(tracker: SliceTracker, slice: TrackedSlice): SliceTracker {
  return record(tracker, slice, slice.metadata?.generation ?? 0);
}

/** Records that the controller deleted the slice. */
export function trackerExpectDeletion(tracker: SliceTracker, slice: TrackedSlice): SliceTracker {
  return record(tracker, slice, DELETION_EXPECTED);
}

/**
 * Whether an informer event about the slice should sync its Service: yes unless the controller
 * itself already wrote this generation (or a newer one).
 */
export function shouldSync(tracker: SliceTracker, slice: TrackedSlice): boolean {
  const generations = tracker[serviceKeyOf(slice)];
  if (generations === undefined) return true;
  const recorded = generations[slice.metadata?.uid ?? ""];
  return recorded === undefined || (slice.metadata?.generation ?? 0) > recorded;
}

/**
 * Whether the listed slices are older than what the controller wrote: a slice at a lower generation
 * than recorded, one expected deleted still present, or a written one missing. Reconciling on such a
 * cache would undo the controller's own writes, so the sync is refused (syncs{result="stale"}).
 * Slices already marked for deletion are left out first, as upstream does: one held by a finalizer
 * after our delete would otherwise look "expected deleted, still present" until the finalizer goes.
 */
export function staleSlices(
  tracker: SliceTracker,
  serviceKey: string,
  listed: readonly TrackedSlice[],
): boolean {
  const generations = tracker[serviceKey];
  if (generations === undefined) return false;
  const present = new Set<string>();
  for (const slice of listed) {
    if (slice.metadata?.deletionTimestamp != null) continue;
    const uid = slice.metadata?.uid ?? "";
    present.add(uid);
    const recorded = generations[uid];
    if (
      recorded !== undefined &&
      (recorded === DELETION_EXPECTED || recorded > (slice.metadata?.generation ?? 0))
    ) {
      return true;
    }
  }
  return Object.entries(generations).some(([uid, g]) => g !== DELETION_EXPECTED && !present.has(uid));
}

/**
 * Handles an informer delete event: forgets the slice and says whether the deletion was expected
 * (the controller deleted it, or never tracked it). An unexpected deletion of a tracked slice means
 * someone else removed it, and the shell should sync the Service to put it back.
 */
export function trackerHandleDeletion(
  tracker: SliceTracker,
  slice: TrackedSlice,
): { tracker: SliceTracker; expected: boolean } {
  const key = serviceKeyOf(slice);
  const generations = tracker[key];
  if (generations === undefined) return { tracker, expected: true };
  const uid = slice.metadata?.uid ?? "";
  const { [uid]: recorded, ...rest } = generations;
  return {
    tracker: { ...tracker, [key]: rest },
    expected: recorded === undefined || recorded === DELETION_EXPECTED,
  };
}

/** Forgets a deleted Service. */
export function trackerDeleteService(tracker: SliceTracker, serviceKey: string): SliceTracker {
  const { [serviceKey]: _gone, ...rest } = tracker;
  return rest;
}
