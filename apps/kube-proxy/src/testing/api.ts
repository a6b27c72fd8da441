// The objects the proxy's tests write through an API client: the Node, and Services and EndpointSlices created
// directly, as an EndpointSlice controller would have left them.
import type { Service, ServiceSpec } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

/** What these helpers need of an API client: one call (the test control plane's admin client is one). */
export interface Api {
  call<T>(method: string, path: string, body?: unknown): Promise<T>;
}

export async function createNode(api: Api, name: string, ip: string): Promise<void> {
  await api.call("POST", "/api/v1/nodes", {
    metadata: { name, labels: { "kubernetes.io/hostname": name } },
  });
  await api.call("PATCH", `/api/v1/nodes/${name}/status`, {
    status: { addresses: [{ type: "InternalIP", address: ip }] },
  });
}

export async function createService(api: Api, ns: string, name: string, spec: ServiceSpec): Promise<Service> {
  return api.call<Service>("POST", `/api/v1/namespaces/${ns}/services`, { metadata: { name }, spec });
}

/** Endpoint IP → node name. */
export type Backends = Record<string, string>;

function slice(ns: string, svc: string, backends: Backends, port: number): EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { namespace: ns, name: `${svc}-1`, labels: { "kubernetes.io/service-name": svc } },
    addressType: "IPv4",
    endpoints: Object.entries(backends).map(([ip, nodeName]) => ({
      addresses: [ip],
      nodeName,
      conditions: { ready: true, serving: true, terminating: false },
    })),
    ports: [{ name: "http", port, protocol: "TCP" }],
  };
}

export async function createSlice(api: Api, ns: string, svc: string, backends: Backends, port = 80) {
  await api.call(
    "POST",
    `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices`,
    slice(ns, svc, backends, port),
  );
}

/** Replaces the endpoints of the Service's slice. */
export async function setSlice(api: Api, ns: string, svc: string, backends: Backends, port = 80) {
  const path = `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices/${svc}-1`;
  const current = await api.call<EndpointSlice>("GET", path);
  await api.call("PUT", path, { ...slice(ns, svc, backends, port), metadata: current.metadata });
}
