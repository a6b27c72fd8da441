// Puts upstream's slices and ours into one comparable form. Only what must differ is removed:
// identity the apiserver assigns (name, uid, resourceVersion, timestamps, generation) and orders
// upstream takes from Go map iteration (endpoints within a slice, which endpoints share a slice,
// ports within a slice).

import { type Api, SLICES } from "@switchyard/testbed";
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import {
  EMPTY_TOPOLOGY_CACHE,
  type Endpoint,
  type EndpointSlice,
  finalize,
  reconcile,
  type SliceOperation,
  setTopologyNodes,
} from "../../src/index.js";
import type { WriteCounts } from "./observe.js";

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

function sortedKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortedKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value)
        .sort(([a], [b]) => byText(a, b))
        .map(([k, v]) => [k, sortedKeys(v)]),
    );
  }
  return value;
}

function normalEndpoint(endpoint: Endpoint): Endpoint {
  const copy = structuredClone(endpoint);
  if (copy.hints?.forZones)
    copy.hints.forZones = [...copy.hints.forZones].sort((a, b) => byText(a.name, b.name));
  if (copy.hints?.forNodes)
    copy.hints.forNodes = [...copy.hints.forNodes].sort((a, b) => byText(a.name, b.name));
  return sortedKeys(copy) as Endpoint;
}

const endpointId = (e: Endpoint) => `${e.targetRef?.name ?? ""}|${e.addresses.join(",")}`;

/** A slice without its identity and without its endpoints (which `endpointsOf` collects). */
export function sliceShape(slice: EndpointSlice): unknown {
  const m = slice.metadata ?? {};
  return sortedKeys({
    metadata: {
      generateName: m.generateName,
      namespace: m.namespace,
      labels: m.labels ?? {},
      annotations: m.annotations ?? {},
      ownerReferences: m.ownerReferences ?? [],
    },
    addressType: slice.addressType,
    ports: [...(slice.ports ?? [])].sort((a, b) => byText(JSON.stringify(a), JSON.stringify(b))),
    endpointCount: slice.endpoints.length,
  });
}

export interface Comparable {
  /** Slice shapes, sorted. */
  slices: unknown[];
  /** Every endpoint of every slice, sorted by Pod and address. */
  endpoints: Endpoint[];
}

export function comparable(slices: readonly EndpointSlice[]): Comparable {
  return {
    slices: slices.map(sliceShape).sort((a, b) => byText(JSON.stringify(a), JSON.stringify(b))),
    endpoints: slices
      .flatMap((s) => s.endpoints.map(normalEndpoint))
      .sort((a, b) => byText(endpointId(a), endpointId(b))),
  };
}

export interface OurResult {
  operations: SliceOperation[];
  writes: WriteCounts;
  /** The slices after our operations, each passed through the apiserver in dry-run mode. */
  after: EndpointSlice[];
  events: string[];
  errors: string[];
}

// A dry run lets the apiserver validate and default our objects exactly as it did upstream's,
// without storing anything.
async function dryRun(api: Api, op: SliceOperation): Promise<EndpointSlice> {
  const ns = op.slice.metadata?.namespace ?? "";
  const base = `${SLICES}/namespaces/${ns}/endpointslices`;
  const slice = { ...op.slice, apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice" };
  if (op.verb === "create") return api.post<EndpointSlice>(`${base}?dryRun=All`, slice);
  const { resourceVersion: _, ...metadata } = slice.metadata ?? {};
  return api.put<EndpointSlice>(`${base}/${metadata.name}?dryRun=All`, { ...slice, metadata });
}

/** Runs our reconcile and finalize on what upstream saw, as a controller started from `existing` would. */
export async function runOurs(
  api: Api,
  input: { service: Service; pods: Pod[]; nodes: Node[] },
  existing: readonly EndpointSlice[],
  triggerTime: Date | undefined,
): Promise<OurResult> {
  const plan = reconcile({
    service: input.service,
    pods: input.pods,
    nodes: input.nodes,
    existingSlices: existing,
    ...(triggerTime ? { triggerTime } : {}),
    topologyCache: setTopologyNodes(EMPTY_TOPOLOGY_CACHE, input.nodes),
  });
  const { operations, changes } = finalize(plan);
  const byName = new Map(existing.map((s) => [s.metadata?.name ?? "", s]));
  const created: EndpointSlice[] = [];
  for (const op of operations) {
    if (op.verb === "delete") byName.delete(op.slice.metadata?.name ?? "");
    else if (op.verb === "update") byName.set(op.slice.metadata?.name ?? "", await dryRun(api, op));
    else created.push(await dryRun(api, op));
  }
  return {
    operations,
    writes: changes,
    after: [...byName.values(), ...created].map((s) => ({ ...s, endpoints: s.endpoints ?? [] })),
    events: plan.events.map((e) => `${e.type} ${e.reason}: ${e.message}`),
    errors: plan.errors,
  };
}

/**
 * Auto hints with the hints reduced to counts of "endpoint zone>hinted zone": upstream donates
 * whichever endpoints its map order visits first, so only how many move between zones is fixed.
 */
export function hintFlows(slices: readonly EndpointSlice[]): Record<string, number> {
  const flows: Record<string, number> = {};
  for (const endpoint of slices.flatMap((s) => s.endpoints)) {
    for (const zone of endpoint.hints?.forZones ?? []) {
      const key = `${endpoint.zone ?? ""}>${zone.name}`;
      flows[key] = (flows[key] ?? 0) + 1;
    }
  }
  return sortedKeys(flows) as Record<string, number>;
}

export function withoutHints(slices: readonly EndpointSlice[]): EndpointSlice[] {
  return slices.map((s) => ({ ...s, endpoints: s.endpoints.map(({ hints: _, ...e }) => e) }));
}

/**
 * Which endpoints each slice that existed `before` holds now (names are stable across updates), and
 * the sizes of slices created since (their names are random). With `onlyKnown`, only endpoints that
 * existed before are listed: upstream places new endpoints in map order.
 */
export function layout(
  slices: readonly EndpointSlice[],
  before: readonly EndpointSlice[],
  onlyKnown = false,
): { kept: Record<string, { size: number; known: string[] }>; newSizes: number[] } {
  const names = new Set(before.map((s) => s.metadata?.name ?? ""));
  const existed = new Set(before.flatMap((s) => s.endpoints.map(endpointId)));
  const known = (id: string) => !onlyKnown || existed.has(id);
  const kept: Record<string, { size: number; known: string[] }> = {};
  const newSizes: number[] = [];
  for (const slice of slices) {
    const name = slice.metadata?.name ?? "";
    if (!names.has(name)) {
      newSizes.push(slice.endpoints.length);
      continue;
    }
    const ids = slice.endpoints.map(endpointId).filter(known);
    kept[name] = { size: slice.endpoints.length, known: ids.sort() };
  }
  return { kept: sortedKeys(kept) as typeof kept, newSizes: newSizes.sort((a, b) => a - b) };
}
