import type { Pod } from "kubernetes-types/core/v1.js";
import type { KubeObject } from "../rest/object.js";

/** Maps an object to the index values it should be found under; [] for none. */
export type IndexFunc<T extends KubeObject = KubeObject> = (obj: T) => string[];

export type Indexers<T extends KubeObject = KubeObject> = Record<string, IndexFunc<T>>;

export const serviceNameLabel = "kubernetes.io/service-name";

/** Index names shared across components, so two of them asking for the same index get one. */
export const indexNames = {
  namespace: "namespace",
  serviceName: "service-name",
  nodeName: "node-name",
} as const;

export const byNamespace: IndexFunc = (obj) => (obj.metadata?.namespace ? [obj.metadata.namespace] : []);

/**
 * EndpointSlices by owning Service, as "namespace/name", from the
 * kubernetes.io/service-name label; namespaced so same-named Services never mix.
 */
export const byServiceName: IndexFunc = (obj) => {
  const service = obj.metadata?.labels?.[serviceNameLabel];
  return service ? [`${obj.metadata?.namespace ?? ""}/${service}`] : [];
};

/** Pods by spec.nodeName; unscheduled pods are not indexed. */
export const byNodeName: IndexFunc<Pod> = (pod) => (pod.spec?.nodeName ? [pod.spec.nodeName] : []);
