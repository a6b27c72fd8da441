import { formatIP, parseIP } from "@switchyard/basics";
import type {
  EndpointPort as CoreEndpointPort,
  EndpointAddress,
  Endpoints,
  Service,
} from "kubernetes-types/core/v1.js";
import {
  ANNOTATION_LAST_CHANGE_TRIGGER_TIME,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  MIRRORING_CONTROLLER_NAME,
} from "./constants.js";
import { EndpointSet, endpointsEqualBeyondKey } from "./endpoint-set.js";
import { portMapKey } from "./ports.js";
import { sliceNamePrefix } from "./slice-meta.js";
import {
  ADDRESS_TYPES,
  type AddressType,
  type Endpoint,
  type EndpointPort,
  type EndpointSlice,
  type ServiceEvent,
} from "./types.js";

export const LABEL_SKIP_MIRROR = "endpointslice.kubernetes.io/skip-mirror";
export const ANNOTATION_LEADER_ELECTION = "control-plane.alpha.kubernetes.io/leader";
const ANNOTATION_LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";
/** --mirroring-max-endpoints-per-subset default. */
export const DEFAULT_MAX_ENDPOINTS_PER_SUBSET = 1000;

/**
 * Whether an Endpoints object should be mirrored: its Service exists and has no selector (with a
 * selector the EndpointSlice controller owns the slices), it is not labelled skip-mirror, and it is
 * not a leader-election lock that merely borrows the Endpoints kind.
 */
export function shouldMirror(endpoints: Endpoints, service: Service | undefined): boolean {
  if (service === undefined || service.spec?.selector != null) return false;
  if (endpoints.metadata?.labels?.[LABEL_SKIP_MIRROR] === "true") return false;
  return !Object.hasOwn(endpoints.metadata?.annotations ?? {}, ANNOTATION_LEADER_ELECTION);
}

export interface MirrorInput {
  endpoints: Endpoints;
  /** Slices managed by the mirroring controller for this Endpoints. */
  existingSlices: readonly EndpointSlice[];
  maxEndpointsPerSubset?: number;
}

export interface MirrorPlan {
  toCreate: EndpointSlice[];
  toUpdate: EndpointSlice[];
  toDelete: EndpointSlice[];
  /** Events for the Endpoints object. */
  events: ServiceEvent[];
  metrics: { added: number; updated: number; removed: number; addressesSkipped: number };
}

function mirroredAnnotations(endpoints: Endpoints): Record<string, string> {
  const out = { ...endpoints.metadata?.annotations };
  delete out[ANNOTATION_LAST_CHANGE_TRIGGER_TIME];
  delete out[ANNOTATION_LAST_APPLIED];
  return out;
}

function sameMap(a: Record<string, string> = {}, b: Record<string, string> = {}): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => Object.hasOwn(b, k) && a[k] === b[k]);
}

function newMirroredSlice(
  endpoints: Endpoints,
  ports: EndpointPort[],
  addressType: AddressType,
  name: string,
): EndpointSlice {
  const name0 = endpoints.metadata?.name ?? "";
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      ...(name === "" ? { generateName: sliceNamePrefix(name0) } : { name }),
      namespace: endpoints.metadata?.namespace ?? "",
      labels: {
        ...endpoints.metadata?.labels,
        [LABEL_SERVICE_NAME]: name0,
        [LABEL_MANAGED_BY]: MIRRORING_CONTROLLER_NAME,
      },
      annotations: mirroredAnnotations(endpoints),
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Endpoints",
          name: name0,
          uid: endpoints.metadata?.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType,
    endpoints: [],
    ports: ports.map((p) => ({ ...p })),
  };
}

function addressToEndpoint(
  address: EndpointAddress,
  ready: boolean,
): { endpoint: Endpoint; family: AddressType } | undefined {
  const parsed = parseIP(address.ip);
  if (parsed === null) return undefined;
  const endpoint: Endpoint = { addresses: [formatIP(parsed)], conditions: { ready } };
  if (address.targetRef !== undefined) endpoint.targetRef = { ...address.targetRef };
  if (address.nodeName != null) endpoint.nodeName = address.nodeName;
  if (address.hostname) endpoint.hostname = address.hostname;
  return { endpoint, family: parsed.family };
}

function toSlicePorts(ports: readonly CoreEndpointPort[] | undefined): EndpointPort[] {
  return (ports ?? []).map((p) => ({
    name: p.name ?? "",
    port: p.port,
    protocol: p.protocol ?? "TCP",
    ...(p.appProtocol !== undefined ? { appProtocol: p.appProtocol } : {}),
  }));
}

const groupKey = (addressType: AddressType, ports: readonly EndpointPort[] | undefined) =>
  `${addressType}${portMapKey(ports)}`;

interface DesiredGroup {
  addressType: AddressType;
  ports: EndpointPort[];
  desired: EndpointSet;
}

/**
 * Mirrors a selectorless Service's Endpoints into EndpointSlices: one slice per subset's port set and
 * address family, holding at most `maxEndpointsPerSubset` addresses (the rest are skipped and an
 * Event says so). An existing slice is rewritten whole when its endpoints, labels or annotations
 * differ; extra slices of the same group are deleted. Pure, like `reconcile`.
 */
export function mirrorEndpoints(input: MirrorInput): MirrorPlan {
  const { endpoints } = input;
  const max = input.maxEndpointsPerSubset ?? DEFAULT_MAX_ENDPOINTS_PER_SUBSET;
  const groups = new Map<string, DesiredGroup>();
  let invalid = 0;
  let skipped = 0;

  for (const subset of endpoints.subsets ?? []) {
    const ports = toSlicePorts(subset.ports);
    for (const addressType of ADDRESS_TYPES) {
      const key = groupKey(addressType, ports);
      if (!groups.has(key)) groups.set(key, { addressType, ports, desired: new EndpointSet() });
    }
    const candidates = [
      ...(subset.addresses ?? []).map((a) => [a, true] as const),
      ...(subset.notReadyAddresses ?? []).map((a) => [a, false] as const),
    ];
    let added = 0;
    for (const [address, ready] of candidates) {
      if (added >= max) break;
      const converted = addressToEndpoint(address, ready);
      if (converted === undefined) {
        invalid++;
        continue;
      }
      groups.get(groupKey(converted.family, ports))?.desired.insert(converted.endpoint);
      added++;
    }
    skipped += candidates.length - added;
  }

  const events: ServiceEvent[] = [];
  if (invalid > 0) {
    const message = `Skipped ${invalid} invalid IP addresses when mirroring to EndpointSlices`;
    events.push({ type: "Warning", reason: "InvalidIPAddress", message });
  }
  if (skipped > invalid) {
    const message = `A max of ${max} addresses can be mirrored to EndpointSlices per Endpoints subset. ${skipped} addresses were skipped`;
    events.push({ type: "Warning", reason: "TooManyAddressesToMirror", message });
  }

  const existingByKey = new Map<string, EndpointSlice[]>();
  for (const slice of input.existingSlices) {
    const key = groupKey(slice.addressType as AddressType, slice.ports);
    existingByKey.set(key, [...(existingByKey.get(key) ?? []), slice]);
  }

  const plan: MirrorPlan = {
    toCreate: [],
    toUpdate: [],
    toDelete: [],
    events,
    metrics: { added: 0, updated: 0, removed: 0, addressesSkipped: skipped },
  };
  const wantAnnotations = mirroredAnnotations(endpoints);
  for (const [key, group] of groups) {
    const existing = existingByKey.get(key) ?? [];
    if (group.desired.size === 0) {
      plan.toDelete.push(...existing);
      plan.metrics.removed += existing.reduce((n, s) => n + (s.endpoints ?? []).length, 0);
      continue;
    }
    const [first, ...extra] = existing;
    plan.toDelete.push(...extra);
    if (first === undefined) {
      plan.metrics.added += group.desired.size;
    } else {
      let matches = 0;
      let updated = 0;
      for (const endpoint of first.endpoints ?? []) {
        const wanted = group.desired.get(endpoint);
        if (wanted === undefined) plan.metrics.removed++;
        else {
          matches++;
          if (!endpointsEqualBeyondKey(wanted, endpoint)) updated++;
        }
      }
      const added = group.desired.size - matches;
      plan.metrics.added += added;
      plan.metrics.updated += updated;
      const labels = { ...first.metadata?.labels };
      delete labels[LABEL_MANAGED_BY];
      delete labels[LABEL_SERVICE_NAME];
      const unchanged =
        added === 0 &&
        updated === 0 &&
        matches === (first.endpoints ?? []).length &&
        sameMap(endpoints.metadata?.labels, labels) &&
        sameMap(wantAnnotations, first.metadata?.annotations);
      if (unchanged) continue;
    }
    const slice = newMirroredSlice(endpoints, group.ports, group.addressType, first?.metadata?.name ?? "");
    while (group.desired.size > 0 && slice.endpoints.length < max) {
      const endpoint = group.desired.pop();
      if (endpoint !== undefined) slice.endpoints.push(endpoint);
    }
    (first === undefined ? plan.toCreate : plan.toUpdate).push(slice);
  }
  for (const [key, slices] of existingByKey) if (!groups.has(key)) plan.toDelete.push(...slices);
  return recycle(plan);
}

/** Pairs creates with deletes of the same family (first with first) and turns them into updates. */
function recycle(plan: MirrorPlan): MirrorPlan {
  const toCreate: EndpointSlice[] = [];
  const toUpdate = [...plan.toUpdate];
  const toDelete = [...plan.toDelete];
  for (const slice of plan.toCreate) {
    const index = toDelete.findIndex((d) => d.addressType === slice.addressType);
    const doomed = index >= 0 ? toDelete.splice(index, 1)[0] : undefined;
    if (doomed === undefined) {
      toCreate.push(slice);
      continue;
    }
    const { generateName: _generated, ...metadata } = slice.metadata ?? {};
    toUpdate.push({ ...slice, metadata: { ...metadata, name: doomed.metadata?.name ?? "" } });
  }
  return { ...plan, toCreate, toUpdate, toDelete };
}
