// The workload behind a Service, to make changes with: the Deployment or StatefulSet that owns its pods,
// scaled through its scale subresource, as `kubectl scale` does.
import type { HttpRestClient } from "@switchyard/kube";
import type { Pod, Service } from "kubernetes-types/core/v1.js";

export interface Workload {
  kind: "Deployment" | "StatefulSet";
  namespace: string;
  name: string;
}

interface Owned {
  metadata?: { ownerReferences?: { kind: string; name: string; controller?: boolean }[] };
}

const controllerOf = (o: Owned) => o.metadata?.ownerReferences?.find((r) => r.controller);

/** The Service's selector as a label selector ("app=echo,tier=web"); one line when it has none. */
export function selectorOf(service: Service): string {
  const sel = service.spec?.selector ?? {};
  const text = Object.entries(sel)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  if (!text)
    throw new Error(
      `Service ${service.metadata?.namespace}/${service.metadata?.name} has no selector: trace --watch follows changes someone else makes`,
    );
  return text;
}

/** The Deployment or StatefulSet that owns the Service's pods. */
export async function workloadOf(client: HttpRestClient, service: Service): Promise<Workload> {
  const ns = service.metadata?.namespace ?? "default";
  const id = `${ns}/${service.metadata?.name}`;
  const pods = await client.call<{ items: Pod[] }>(
    "GET",
    `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selectorOf(service))}`,
  );
  for (const pod of pods.items) {
    const owner = controllerOf(pod);
    if (owner?.kind === "StatefulSet") return { kind: "StatefulSet", namespace: ns, name: owner.name };
    if (owner?.kind !== "ReplicaSet") continue;
    const rs = await client.call<Owned>("GET", `/apis/apps/v1/namespaces/${ns}/replicasets/${owner.name}`);
    const top = controllerOf(rs);
    if (top?.kind === "Deployment") return { kind: "Deployment", namespace: ns, name: top.name };
  }
  throw new Error(
    `the pods of Service ${id} belong to no Deployment or StatefulSet; change them yourself and run trace ${id} --watch`,
  );
}

const scalePath = (w: Workload) =>
  `/apis/apps/v1/namespaces/${w.namespace}/${w.kind === "Deployment" ? "deployments" : "statefulsets"}/${w.name}/scale`;

export async function replicasOf(client: HttpRestClient, w: Workload): Promise<number> {
  const scale = await client.call<{ spec?: { replicas?: number } }>("GET", scalePath(w));
  return scale.spec?.replicas ?? 0;
}

export async function scaleTo(client: HttpRestClient, w: Workload, replicas: number): Promise<void> {
  await client.call("PATCH", scalePath(w), { spec: { replicas } }, "application/merge-patch+json");
}
