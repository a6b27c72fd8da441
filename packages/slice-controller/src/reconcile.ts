import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import { addressTypesForService } from "./address-family.js";
import { LABEL_SERVICE_NAME } from "./constants.js";
import { EndpointSet } from "./endpoint-set.js";
import { applyHints, topologyLabel } from "./hints/apply-hints.js";
import { removeServiceHints, type TopologyCacheState } from "./hints/topology-cache.js";
import { topologyHintsEnabled, validTrafficDistribution } from "./hints/traffic-distribution.js";
import { efficiencyTotals, type GroupEfficiency, type ReconcileMetrics } from "./metrics.js";
import { type ReconcileOptions, type ResolvedOptions, resolveOptions } from "./options.js";
import { packPortGroup } from "./pack.js";
import { isSamePlaceholder } from "./placeholder.js";
import { podToEndpoint, shouldPodBeInEndpoints } from "./pod-endpoint.js";
import { endpointPortsFor, portMapKey } from "./ports.js";
import { newEndpointSlice, ownedBy } from "./slice-meta.js";
import { applyTriggerTime } from "./trigger-time.js";
import {
  ADDRESS_TYPES,
  type AddressType,
  type EndpointPort,
  type EndpointSlice,
  type ServiceEvent,
} from "./types.js";

export type NodeLookup = (name: string) => Node | undefined;

export interface ReconcileInput {
  service: Service;
  /** Pods matching the Service's selector. */
  pods: readonly Pod[];
  /** All Nodes, or a lookup by name. A Pod whose Node is unknown is skipped (see `errors`). */
  nodes: readonly Node[] | NodeLookup;
  /** Slices labelled for this Service and managed by this controller, without deleting ones. */
  existingSlices: readonly EndpointSlice[];
  /** When the change that caused this sync happened; becomes last-change-trigger-time. */
  triggerTime?: Date;
  /** Legacy Auto hints state; leave undefined to run without a topology cache. */
  topologyCache?: TopologyCacheState;
  options?: ReconcileOptions;
}

export interface ReconcilePlan {
  /** The Service reconciled; finalize uses it for the ownership check and deletion state. */
  service: Service;
  toCreate: EndpointSlice[];
  toUpdate: EndpointSlice[];
  toDelete: EndpointSlice[];
  events: ServiceEvent[];
  /** Non-fatal problems; when non-empty the shell should requeue the Service with backoff. */
  errors: string[];
  metrics: ReconcileMetrics;
  topologyCache: TopologyCacheState | undefined;
}

interface Group {
  ports: EndpointPort[];
  desired: EndpointSet;
}

function nodeLookup(nodes: ReconcileInput["nodes"]): NodeLookup {
  if (typeof nodes === "function") return nodes;
  const byName = new Map(nodes.map((n) => [n.metadata?.name ?? "", n]));
  return (name) => byName.get(name);
}

// The apiserver may send an empty endpoint list as null.
function normalised(slice: EndpointSlice): EndpointSlice {
  return Array.isArray(slice.endpoints) ? slice : { ...slice, endpoints: [] };
}

function desiredGroups(
  input: ReconcileInput,
  addressType: AddressType,
  errors: string[],
): Map<string, Group> {
  const { service } = input;
  const lookup = nodeLookup(input.nodes);
  const groups = new Map<string, Group>();
  for (const pod of input.pods) {
    if (!shouldPodBeInEndpoints(pod)) continue;
    const ports = endpointPortsFor(service, pod);
    const key = portMapKey(ports);
    let group = groups.get(key);
    if (group === undefined) {
      group = { ports, desired: new EndpointSet() };
      groups.set(key, group);
    }
    const nodeName = pod.spec?.nodeName ?? "";
    const node = lookup(nodeName);
    // Skipping (and requeueing) keeps a Pod bound to a vanished Node from pinning the slice; a
    // Service that publishes not-ready addresses wants the Pod listed regardless.
    if (node === undefined && !service.spec?.publishNotReadyAddresses) {
      const where = `${service.metadata?.namespace}/${service.metadata?.name}`;
      errors.push(`skipping Pod ${pod.metadata?.name} for Service ${where}: Node ${nodeName} Not Found`);
      continue;
    }
    const endpoint = podToEndpoint(pod, node, service, addressType);
    if (endpoint.addresses.length > 0) group.desired.insert(endpoint);
  }
  return groups;
}

interface AddressTypeResult {
  toCreate: EndpointSlice[];
  toUpdate: EndpointSlice[];
  toDelete: EndpointSlice[];
  added: number;
  removed: number;
  updated: number;
  efficiency: GroupEfficiency[];
}

function packAddressType(
  input: ReconcileInput,
  options: ResolvedOptions,
  addressType: AddressType,
  existing: readonly EndpointSlice[],
  owned: (slice: EndpointSlice) => boolean,
  errors: string[],
): AddressTypeResult {
  const { service } = input;
  const result: AddressTypeResult = {
    ...{ toCreate: [], toUpdate: [], toDelete: [], added: 0, removed: 0, updated: 0 },
    efficiency: [],
  };
  const existingByKey = new Map<string, EndpointSlice[]>();
  for (const slice of existing) {
    if (!owned(slice)) {
      result.toDelete.push(slice);
      continue;
    }
    const key = portMapKey(slice.ports);
    existingByKey.set(key, [...(existingByKey.get(key) ?? []), slice]);
  }

  const groups = desiredGroups(input, addressType, errors);
  const efficiency = new Map<string, GroupEfficiency>();
  for (const [key, group] of groups) {
    const endpoints = group.desired.size;
    const before = existingByKey.get(key) ?? [];
    const packed = packPortGroup({
      service,
      addressType,
      ports: group.ports,
      existing: before,
      desired: group.desired,
      maxEndpointsPerSlice: options.maxEndpointsPerSlice,
      controllerName: options.controllerName,
    });
    result.toCreate.push(...packed.toCreate);
    result.toUpdate.push(...packed.toUpdate);
    result.toDelete.push(...packed.toDelete);
    result.added += packed.added;
    result.removed += packed.removed;
    result.updated += packed.updated;
    efficiency.set(key, {
      endpoints,
      slices: before.length + packed.toCreate.length - packed.toDelete.length,
    });
  }
  // Port sets no Pod produces any more.
  for (const [key, slices] of existingByKey) if (!groups.has(key)) result.toDelete.push(...slices);

  // Keep one (empty) slice per address type so consumers can tell "no endpoints" from "not synced".
  if (existing.length === result.toDelete.length && result.toCreate.length === 0) {
    const placeholder = newEndpointSlice(service, [], addressType, options.controllerName);
    const only = result.toDelete[0];
    if (result.toDelete.length === 1 && only !== undefined && isSamePlaceholder(only, placeholder)) {
      result.toDelete = [];
    } else {
      result.toCreate.push(placeholder);
    }
    efficiency.set(portMapKey([]), { endpoints: 0, slices: 1 });
  }
  result.efficiency = [...efficiency.values()];
  return result;
}

function serviceKeyOfSlice(slice: EndpointSlice): string | undefined {
  const name = slice.metadata?.labels?.[LABEL_SERVICE_NAME];
  return name ? `${slice.metadata?.namespace ?? ""}/${name}` : undefined;
}

/**
 * Computes the EndpointSlice writes that make the Service's slices match its Pods, the way the
 * upstream EndpointSlice controller does. Pure: inputs are never modified (slices to write are
 * copies), and nothing is sent anywhere; pass the result to `finalize` for the API operations.
 */
export function reconcile(input: ReconcileInput): ReconcilePlan {
  const options = resolveOptions(input.options);
  const { service } = input;
  const serviceKey = `${service.metadata?.namespace ?? ""}/${service.metadata?.name ?? ""}`;
  const supported = addressTypesForService(service);
  const owned = (slice: EndpointSlice) => ownedBy(slice, service);

  let topologyCache = input.topologyCache;
  const toCreate: EndpointSlice[] = [];
  const toUpdate: EndpointSlice[] = [];
  const toDelete: EndpointSlice[] = [];
  const events: ServiceEvent[] = [];
  const errors: string[] = [];

  const byType = new Map<AddressType, EndpointSlice[]>();
  const droppedFamily: EndpointSlice[] = [];
  for (const raw of input.existingSlices) {
    const slice = normalised(raw);
    const type = slice.addressType as AddressType;
    if (!supported.has(type)) {
      const key = serviceKeyOfSlice(slice);
      if (topologyCache !== undefined && key !== undefined)
        topologyCache = removeServiceHints(topologyCache, key, type);
      droppedFamily.push(raw);
      continue;
    }
    byType.set(type, [...(byType.get(type) ?? []), slice]);
  }

  const perAddressType: ReconcileMetrics["perAddressType"] = [];
  const efficiency: GroupEfficiency[] = [];
  for (const addressType of ADDRESS_TYPES.filter((t) => supported.has(t))) {
    const existing = byType.get(addressType) ?? [];
    const packed = packAddressType(input, options, addressType, existing, owned, errors);
    const touched = new Set([...packed.toUpdate, ...packed.toDelete].map((s) => s.metadata?.name));
    const hinted = applyHints({
      service,
      serviceKey,
      addressType,
      toCreate: packed.toCreate,
      toUpdate: packed.toUpdate,
      unchanged: existing.filter((s) => !touched.has(s.metadata?.name)),
      topologyCache,
      preferSameTrafficDistribution: options.preferSameTrafficDistribution,
    });
    topologyCache = hinted.topologyCache;
    for (const slice of [...hinted.toCreate, ...hinted.toUpdate]) applyTriggerTime(slice, input.triggerTime);
    toCreate.push(...hinted.toCreate);
    toUpdate.push(...hinted.toUpdate);
    toDelete.push(...packed.toDelete);
    events.push(...hinted.events);
    perAddressType.push({
      addressType,
      added: packed.added,
      removed: packed.removed,
      updated: packed.updated,
    });
    efficiency.push(...packed.efficiency);
  }
  toDelete.push(...droppedFamily);

  const trafficDistribution = validTrafficDistribution(service, options.preferSameTrafficDistribution);
  const auto = topologyHintsEnabled(service.metadata?.annotations);
  const metrics: ReconcileMetrics = {
    perAddressType,
    endpointsAdded: perAddressType.reduce((n, t) => n + t.added, 0),
    endpointsRemoved: perAddressType.reduce((n, t) => n + t.removed, 0),
    endpointsUpdated: perAddressType.reduce((n, t) => n + t.updated, 0),
    ...efficiencyTotals(efficiency, options.maxEndpointsPerSlice),
    topology: topologyLabel(service, input.topologyCache),
    trafficDistribution: trafficDistribution !== undefined && !auto ? trafficDistribution : "",
  };
  return { service, toCreate, toUpdate, toDelete, events, errors, metrics, topologyCache };
}
