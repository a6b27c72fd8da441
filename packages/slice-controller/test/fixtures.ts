// Test address plan: namespace "ns", Service "web" (uid "svc-uid"), pods 10.0.<i/250>.<i%250+1> and
// fd00::<i+1>, nodes node-<zone>-<n> in zones "a", "b", "c".
import type { Container, Node, Pod, Service, ServicePort } from "kubernetes-types/core/v1.js";
import {
  type AddressType,
  CONTROLLER_NAME,
  type Endpoint,
  type EndpointPort,
  type EndpointSlice,
  finalize,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_TOPOLOGY_ZONE,
  type ReconcilePlan,
  serviceOwnerReference,
} from "../src/index.js";

export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key]);
  }
  return value;
}

export interface ServiceOptions {
  name?: string;
  uid?: string;
  ports?: ServicePort[];
  clusterIP?: string;
  ipFamilies?: string[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  trafficDistribution?: string;
  publishNotReadyAddresses?: boolean;
  deletionTimestamp?: string;
}

export function makeService(o: ServiceOptions = {}): Service {
  const spec: NonNullable<Service["spec"]> = {
    selector: { app: "web" },
    clusterIP: o.clusterIP ?? "172.30.0.10",
    ports: o.ports ?? [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
  };
  if (o.ipFamilies) spec.ipFamilies = o.ipFamilies;
  else if (o.clusterIP === undefined) spec.ipFamilies = ["IPv4"];
  if (o.trafficDistribution) spec.trafficDistribution = o.trafficDistribution;
  if (o.publishNotReadyAddresses) spec.publishNotReadyAddresses = true;
  const metadata: NonNullable<Service["metadata"]> = {
    name: o.name ?? "web",
    namespace: "ns",
    uid: o.uid ?? "svc-uid",
    ...(o.labels ? { labels: o.labels } : {}),
    ...(o.annotations ? { annotations: o.annotations } : {}),
    ...(o.deletionTimestamp ? { deletionTimestamp: o.deletionTimestamp } : {}),
  };
  return { apiVersion: "v1", kind: "Service", metadata, spec };
}

export interface PodOptions {
  ips?: string[];
  node?: string;
  ready?: boolean;
  phase?: string;
  terminating?: boolean;
  hostname?: string;
  subdomain?: string;
  namespace?: string;
  containers?: Container[];
  initContainers?: Container[];
}

export function podIPv4(i: number): string {
  return `10.0.${Math.floor(i / 250)}.${(i % 250) + 1}`;
}

export function makePod(i: number, o: PodOptions = {}): Pod {
  const ips = o.ips ?? [podIPv4(i)];
  const pod: Pod = {
    metadata: {
      name: `pod-${i}`,
      namespace: o.namespace ?? "ns",
      uid: `pod-uid-${i}`,
      labels: { app: "web" },
      ...(o.terminating ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    spec: { nodeName: o.node ?? "node-a-1", containers: o.containers ?? [{ name: "app" }] },
    status: {
      phase: o.phase ?? "Running",
      conditions: [{ type: "Ready", status: o.ready === false ? "False" : "True" }],
      podIPs: ips.map((ip) => ({ ip })),
    },
  };
  if (ips[0] !== undefined && pod.status) pod.status.podIP = ips[0];
  if (o.hostname && pod.spec) pod.spec.hostname = o.hostname;
  if (o.subdomain && pod.spec) pod.spec.subdomain = o.subdomain;
  if (o.initContainers && pod.spec) pod.spec.initContainers = o.initContainers;
  return pod;
}

export function makePods(count: number, o: PodOptions = {}): Pod[] {
  return Array.from({ length: count }, (_, i) => makePod(i, o));
}

export function makeNode(
  name: string,
  zone: string | undefined,
  cpu = "4",
  o: { ready?: boolean; labels?: Record<string, string> } = {},
): Node {
  const labels: Record<string, string> = { ...o.labels };
  if (zone !== undefined) labels[LABEL_TOPOLOGY_ZONE] = zone;
  return {
    metadata: { name, labels },
    status: {
      allocatable: { cpu },
      conditions: [{ type: "Ready", status: o.ready === false ? "False" : "True" }],
    },
  };
}

export const DEFAULT_NODES: Node[] = [
  makeNode("node-a-1", "a"),
  makeNode("node-b-1", "b"),
  makeNode("node-c-1", "c"),
];

/** The endpoint reconcile would build for makePod(i) on node-a-1 (zone a), ready. */
export function expectedEndpoint(i: number, overrides: Partial<Endpoint> = {}): Endpoint {
  return {
    addresses: [podIPv4(i)],
    conditions: { ready: true, serving: true, terminating: false },
    targetRef: { kind: "Pod", namespace: "ns", name: `pod-${i}`, uid: `pod-uid-${i}` },
    nodeName: "node-a-1",
    zone: "a",
    ...overrides,
  };
}

export const HTTP_PORTS: EndpointPort[] = [{ name: "http", port: 8080, protocol: "TCP" }];

export function makeSlice(
  name: string,
  endpoints: Endpoint[],
  o: {
    service?: Service;
    addressType?: AddressType;
    ports?: EndpointPort[];
    labels?: Record<string, string>;
  } = {},
): EndpointSlice {
  const service = o.service ?? makeService();
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      name,
      namespace: "ns",
      generateName: "web-",
      uid: `uid-${name}`,
      generation: 1,
      labels: o.labels ?? {
        [LABEL_SERVICE_NAME]: service.metadata?.name ?? "",
        [LABEL_MANAGED_BY]: CONTROLLER_NAME,
      },
      ownerReferences: [serviceOwnerReference(service)],
    },
    addressType: o.addressType ?? "IPv4",
    endpoints,
    ports: o.ports ?? HTTP_PORTS,
  };
}

/**
 * Applies a plan the way the apiserver would (names for created slices, updates replace, deletes
 * remove) and returns the resulting slices, frozen, for the next reconcile.
 */
export function applyPlan(
  existing: readonly EndpointSlice[],
  plan: ReconcilePlan,
  prefix = "gen",
): EndpointSlice[] {
  const byName = new Map(existing.map((s) => [s.metadata?.name ?? "", s]));
  let n = 0;
  for (const op of finalize(plan).operations) {
    if (op.verb === "delete") byName.delete(op.slice.metadata?.name ?? "");
    else if (op.verb === "update") byName.set(op.slice.metadata?.name ?? "", op.slice);
    else {
      const name = `${op.slice.metadata?.generateName ?? ""}${prefix}${n++}`;
      byName.set(name, { ...op.slice, metadata: { ...op.slice.metadata, name, uid: `uid-${name}` } });
    }
  }
  return deepFreeze([...byName.values()].map((s) => structuredClone(s)));
}

export function endpointCount(slices: readonly EndpointSlice[]): number[] {
  return slices.map((s) => s.endpoints.length);
}
