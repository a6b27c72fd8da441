import { ApiError, endpointSlices, isNotFound, type RestClient } from "@switchyard/kube";
import {
  type EndpointSlice,
  type SliceOperation,
  type SliceTracker,
  trackerExpectDeletion,
  trackerUpdate,
} from "@switchyard/slice-controller";
import type { EndpointSlice as ApiEndpointSlice } from "kubernetes-types/discovery/v1.js";

/** Shared, replaceable tracker value: the library's tracker is immutable, the shell holds the latest. */
export interface TrackerRef {
  value: SliceTracker;
}

export interface ApplyOutcome {
  /** Operations the apiserver accepted, by verb. */
  done: { create: number; update: number; delete: number };
  /** True when creates stopped because the namespace is terminating (not an error). */
  namespaceTerminating: boolean;
}

// The apiserver refuses creates in a terminating namespace with this cause; retrying cannot help.
function isNamespaceTerminating(err: unknown): boolean {
  if (!(err instanceof ApiError) || typeof err.body !== "object") return false;
  const causes = (err.body.details?.causes ?? []) as { type?: string }[];
  return causes.some((c) => c.type === "NamespaceTerminating");
}

const asApi = (slice: EndpointSlice) => slice as unknown as ApiEndpointSlice;
const fromApi = (slice: ApiEndpointSlice) => slice as unknown as EndpointSlice;

/**
 * Performs the operations in order, recording every accepted write in the tracker with the object
 * the apiserver returned, so the informer echo of our own write does not cause another sync. The
 * first failure stops the rest and is thrown; what was done before it stays recorded.
 */
export async function applyOperations(
  client: RestClient,
  operations: readonly SliceOperation[],
  tracker: TrackerRef,
  onChange?: (verb: SliceOperation["verb"]) => void,
): Promise<ApplyOutcome> {
  const outcome: ApplyOutcome = { done: { create: 0, update: 0, delete: 0 }, namespaceTerminating: false };
  for (const op of operations) {
    const namespace = op.slice.metadata?.namespace;
    try {
      if (op.verb === "create") {
        const created = await client.create(endpointSlices, asApi(op.slice), { namespace });
        tracker.value = trackerUpdate(tracker.value, fromApi(created));
      } else if (op.verb === "update") {
        const updated = await client.update(endpointSlices, asApi(op.slice), { namespace });
        tracker.value = trackerUpdate(tracker.value, fromApi(updated));
      } else {
        try {
          await client.delete(endpointSlices, op.slice.metadata?.name ?? "", { namespace });
        } catch (err) {
          // Already gone is what we wanted.
          if (!isNotFound(err)) throw err;
        }
        tracker.value = trackerExpectDeletion(tracker.value, op.slice);
      }
    } catch (err) {
      if (op.verb === "create" && isNamespaceTerminating(err)) {
        outcome.namespaceTerminating = true;
        continue;
      }
      const name = op.slice.metadata?.name || op.slice.metadata?.generateName || "";
      throw new Error(`failed to ${op.verb} EndpointSlice ${namespace}/${name}: ${(err as Error).message}`);
    }
    outcome.done[op.verb]++;
    onChange?.(op.verb);
  }
  return outcome;
}
