import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import {
  type EndpointSlice,
  type NodeLookup,
  type ReconcileInput,
  type ReconcilePlan,
  reconcile,
} from "../src/index.js";
import { DEFAULT_NODES, deepFreeze, makeService } from "./fixtures.js";

/** Runs reconcile on deep-frozen inputs, so any mutation of them throws. */
export function run(
  o: Partial<Omit<ReconcileInput, "pods" | "existingSlices">> & {
    pods?: Pod[];
    existingSlices?: readonly EndpointSlice[];
    service?: Service;
    nodes?: Node[] | NodeLookup;
  },
): ReconcilePlan {
  const input: ReconcileInput = {
    service: o.service ?? makeService(),
    pods: o.pods ?? [],
    nodes: o.nodes ?? DEFAULT_NODES,
    existingSlices: o.existingSlices ?? [],
    ...(o.triggerTime ? { triggerTime: o.triggerTime } : {}),
    ...(o.topologyCache ? { topologyCache: o.topologyCache } : {}),
    ...(o.options ? { options: o.options } : {}),
  };
  return reconcile(deepFreeze(input));
}

export function writes(plan: ReconcilePlan): { create: number; update: number; delete: number } {
  return { create: plan.toCreate.length, update: plan.toUpdate.length, delete: plan.toDelete.length };
}
