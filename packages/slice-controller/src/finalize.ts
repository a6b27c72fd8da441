import type { Service } from "kubernetes-types/core/v1.js";
import { ownedBy } from "./slice-meta.js";
import type { EndpointSlice } from "./types.js";

export type SliceOperation =
  | { verb: "create"; slice: EndpointSlice }
  | { verb: "update"; slice: EndpointSlice }
  | { verb: "delete"; slice: EndpointSlice };

export interface FinalizeContext {
  /** The Service has a deletionTimestamp; defaults to reading it from the plan's Service. */
  serviceDeleting?: boolean;
  /** The namespace is terminating, so the apiserver would refuse creates. */
  namespaceTerminating?: boolean;
}

export interface FinalizeResult {
  /** API calls in the order to make them: creates, then updates, then deletes. */
  operations: SliceOperation[];
  /** Increments of endpoint_slice_controller_changes{operation}, once the operations succeed. */
  changes: { create: number; update: number; delete: number };
  /** Observation for endpointslices_changed_per_sync (creates are counted even when skipped). */
  slicesChanged: number;
}

export interface PlannedWrites {
  service: Service;
  toCreate: readonly EndpointSlice[];
  toUpdate: readonly EndpointSlice[];
  toDelete: readonly EndpointSlice[];
}

/**
 * Turns a plan into API operations. A create and a delete of the same address type become one
 * update that reuses the doomed slice's name: one write instead of two, and no moment without the
 * slice. Only slices owned by this very Service are reused, so a slice left by an earlier Service of
 * the same name is still deleted. Creates are skipped while the Service is being deleted (the
 * garbage collector would race them) or its namespace is terminating. The plan is not modified.
 */
export function finalize(plan: PlannedWrites, context: FinalizeContext = {}): FinalizeResult {
  const serviceDeleting = context.serviceDeleting ?? plan.service.metadata?.deletionTimestamp != null;
  const createsByType = new Map<string, EndpointSlice[]>();
  for (const slice of plan.toCreate) {
    createsByType.set(slice.addressType, [...(createsByType.get(slice.addressType) ?? []), slice]);
  }
  const updates = [...plan.toUpdate];
  const deletes: EndpointSlice[] = [];
  for (const doomed of plan.toDelete) {
    const creates = createsByType.get(doomed.addressType);
    const reuse =
      creates !== undefined && creates.length > 0 && ownedBy(doomed, plan.service)
        ? creates.pop()
        : undefined;
    if (reuse === undefined) {
      deletes.push(doomed);
      continue;
    }
    updates.push({ ...reuse, metadata: { ...reuse.metadata, name: doomed.metadata?.name ?? "" } });
  }
  const creates = [...createsByType.values()].flat();

  const skipCreates = serviceDeleting || (context.namespaceTerminating ?? false);
  const operations: SliceOperation[] = [
    ...(skipCreates ? [] : creates.map((slice) => ({ verb: "create" as const, slice }))),
    ...updates.map((slice) => ({ verb: "update" as const, slice })),
    ...deletes.map((slice) => ({ verb: "delete" as const, slice })),
  ];
  const count = (verb: SliceOperation["verb"]) => operations.filter((o) => o.verb === verb).length;
  return {
    operations,
    changes: { create: count("create"), update: count("update"), delete: count("delete") },
    slicesChanged: creates.length + updates.length + deletes.length,
  };
}
