import type { HttpRestClient } from "@switchyard/kube";
import type { KubeObject } from "./manifests.js";

/** Where a kind lives in the API: the kinds Switchyard's manifests use (and the migration's second DaemonSet). */
const resources: Record<string, { plural: string; namespaced: boolean }> = {
  Namespace: { plural: "namespaces", namespaced: false },
  ServiceAccount: { plural: "serviceaccounts", namespaced: true },
  ConfigMap: { plural: "configmaps", namespaced: true },
  Service: { plural: "services", namespaced: true },
  ClusterRole: { plural: "clusterroles", namespaced: false },
  ClusterRoleBinding: { plural: "clusterrolebindings", namespaced: false },
  Role: { plural: "roles", namespaced: true },
  RoleBinding: { plural: "rolebindings", namespaced: true },
  Deployment: { plural: "deployments", namespaced: true },
  DaemonSet: { plural: "daemonsets", namespaced: true },
  PodDisruptionBudget: { plural: "poddisruptionbudgets", namespaced: true },
};

/** The object's URL: /api/v1/... for the core group, /apis/<group>/<version>/... otherwise. */
export function objectPath(obj: Pick<KubeObject, "apiVersion" | "kind" | "metadata">): string {
  const r = resources[obj.kind];
  if (!r)
    throw new Error(`apply: kind ${obj.kind} (${obj.metadata.name}) is not one the lab knows how to apply`);
  const base = obj.apiVersion.includes("/") ? `/apis/${obj.apiVersion}` : `/api/${obj.apiVersion}`;
  const ns = r.namespaced ? `/namespaces/${obj.metadata.namespace ?? "default"}` : "";
  return `${base}${ns}/${r.plural}/${obj.metadata.name}`;
}

// Kinds an object may depend on come first, workloads last, keeping the manifests' order otherwise.
const order = [
  "Namespace",
  "ServiceAccount",
  "ClusterRole",
  "ClusterRoleBinding",
  "Role",
  "RoleBinding",
  "ConfigMap",
  "Service",
  "PodDisruptionBudget",
];
const rank = (kind: string) => (order.includes(kind) ? order.indexOf(kind) : order.length);

export function applyOrder(objects: readonly KubeObject[]): KubeObject[] {
  return objects
    .map((o, i) => ({ o, i }))
    .sort((a, b) => rank(a.o.kind) - rank(b.o.kind) || a.i - b.i)
    .map(({ o }) => o);
}

/**
 * Server-side apply, as `kubectl apply --server-side --force-conflicts` does: the apiserver merges, creates
 * what is missing and records the lab as the fields' manager. JSON is valid YAML, so the body is the object.
 */
export async function applyObjects(
  client: HttpRestClient,
  objects: readonly KubeObject[],
  onApplied?: (what: string) => void,
) {
  for (const obj of applyOrder(objects)) {
    await client.call(
      "PATCH",
      `${objectPath(obj)}?fieldManager=switchyard-lab&force=true`,
      obj,
      "application/apply-patch+yaml",
    );
    onApplied?.(`${obj.kind.toLowerCase()}/${obj.metadata.name}`);
  }
}
