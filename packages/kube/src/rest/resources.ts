import type { Lease } from "kubernetes-types/coordination/v1.js";
import type { ConfigMap, Endpoints, Event, Namespace, Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { KubeObject } from "./object.js";

/**
 * Where a kind lives in the API. The type parameter only ties a descriptor to
 * its object type so that `client.get(pods, ...)` returns a Pod.
 */
export interface ResourceDescriptor<T extends KubeObject = KubeObject> {
  /** "" for the core group. */
  group: string;
  version: string;
  /** Plural, lower-case: the URL segment. */
  resource: string;
  kind: string;
  namespaced: boolean;
  /** Phantom field for type inference; never set. */
  readonly __type?: T;
}

export function defineResource<T extends KubeObject>(
  descriptor: Omit<ResourceDescriptor<T>, "__type">,
): ResourceDescriptor<T> {
  return Object.freeze({ ...descriptor });
}

/** "v1" for the core group, else "group/version". */
export function apiVersionOf(res: ResourceDescriptor): string {
  return res.group === "" ? res.version : `${res.group}/${res.version}`;
}

export const pods = defineResource<Pod>({
  group: "",
  version: "v1",
  resource: "pods",
  kind: "Pod",
  namespaced: true,
});
export const services = defineResource<Service>({
  group: "",
  version: "v1",
  resource: "services",
  kind: "Service",
  namespaced: true,
});
export const endpoints = defineResource<Endpoints>({
  group: "",
  version: "v1",
  resource: "endpoints",
  kind: "Endpoints",
  namespaced: true,
});
export const nodes = defineResource<Node>({
  group: "",
  version: "v1",
  resource: "nodes",
  kind: "Node",
  namespaced: false,
});
export const namespaces = defineResource<Namespace>({
  group: "",
  version: "v1",
  resource: "namespaces",
  kind: "Namespace",
  namespaced: false,
});
export const configMaps = defineResource<ConfigMap>({
  group: "",
  version: "v1",
  resource: "configmaps",
  kind: "ConfigMap",
  namespaced: true,
});
export const events = defineResource<Event>({
  group: "",
  version: "v1",
  resource: "events",
  kind: "Event",
  namespaced: true,
});
export const endpointSlices = defineResource<EndpointSlice>({
  group: "discovery.k8s.io",
  version: "v1",
  resource: "endpointslices",
  kind: "EndpointSlice",
  namespaced: true,
});
export const leases = defineResource<Lease>({
  group: "coordination.k8s.io",
  version: "v1",
  resource: "leases",
  kind: "Lease",
  namespaced: true,
});
