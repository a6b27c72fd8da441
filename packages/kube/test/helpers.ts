import type { Pod } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

export function makePod(
  namespace: string,
  name: string,
  extra: { nodeName?: string; ip?: string } = {},
): Pod {
  return {
    metadata: { namespace, name, labels: { app: name } },
    spec: { nodeName: extra.nodeName, containers: [{ name: "c", image: "registry.example/app:1" }] },
    status: { podIP: extra.ip },
  };
}

export function makeSlice(namespace: string, name: string, service: string): EndpointSlice {
  return {
    metadata: { namespace, name, labels: { "kubernetes.io/service-name": service } },
    addressType: "IPv4",
    endpoints: [],
  };
}

/** Records informer callbacks as short strings: "add ns/name", "update ns/name", "delete ns/name". */
export function recordEvents() {
  const seen: string[] = [];
  const key = (o: { metadata?: { namespace?: string; name?: string } }) =>
    `${o.metadata?.namespace}/${o.metadata?.name}`;
  return {
    seen,
    handler: {
      onAdd: (o: Pod) => seen.push(`add ${key(o)}`),
      onUpdate: (_old: Pod, o: Pod) => seen.push(`update ${key(o)}`),
      onDelete: (o: Pod) => seen.push(`delete ${key(o)}`),
    },
  };
}
