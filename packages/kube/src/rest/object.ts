import type { ListMeta, ObjectMeta } from "kubernetes-types/meta/v1.js";

/** The shape every Kubernetes object shares; enough for caching, keys and diffs. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}

export interface KubeList<T extends KubeObject> {
  apiVersion?: string;
  kind?: string;
  metadata: ListMeta;
  items: T[];
}

export type WatchEventType = "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";

/** One line of a watch stream. ERROR events carry a meta/v1 Status as `object`. */
export interface WatchEvent<T extends KubeObject> {
  type: WatchEventType;
  object: T;
}

/** The cache key client-go uses: "namespace/name", or "name" for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  const name = obj.metadata?.name ?? "";
  return ns ? `${ns}/${name}` : name;
}

export function keyOf(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}
