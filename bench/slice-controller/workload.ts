// Objects the scenarios create, the way a scheduler and kubelet would have left them: Pods bound to
// a Node by spec.nodeName, their IP and readiness set through /status.
import { type Api, createNamespace, createNode, createService, setPodReady } from "@switchyard/testbed";
import { type ApiPool, forEachConcurrent, retrying } from "./pool.js";

/** Requests in flight while creating objects. */
export const CONCURRENCY = 32;
const ZONES = ["zone-a", "zone-b", "zone-c"];

export interface PodPlan {
  name: string;
  node: string;
  ip: string;
  labels: Record<string, string>;
}

/** Hands out unique Pod IPs from 10.0.0.0/8, and Nodes round robin. */
export class Planner {
  #next = 1 << 16;
  #pod = 0;
  constructor(readonly nodes: readonly string[]) {}

  pod(name: string, labels: Record<string, string>): PodPlan {
    const n = this.#next++;
    const ip = `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`;
    const node = this.nodes[this.#pod++ % this.nodes.length] as string;
    return { name, node, ip, labels };
  }
}

export async function createNodes(api: Api, count: number): Promise<string[]> {
  const names = Array.from({ length: count }, (_, i) => `node-${i}`);
  await forEachConcurrent(names, 8, (name, i) =>
    createNode(api, name, ZONES[i % ZONES.length] as string, "4"),
  );
  return names;
}

export { createNamespace };

/** Creates the Pods (POST, then Ready through /status), `CONCURRENCY` requests in flight. */
export async function createReadyPods(pool: ApiPool, namespace: string, pods: readonly PodPlan[]) {
  await forEachConcurrent(pods, CONCURRENCY, async (p, i) => {
    const api = pool.pick(i);
    await retrying(() =>
      api.post(`/api/v1/namespaces/${namespace}/pods`, {
        metadata: { name: p.name, labels: p.labels },
        spec: { nodeName: p.node, containers: [{ name: "app", image: "registry.example/app:1" }] },
      }),
    );
    await retrying(() => setPodReady(api, namespace, p.name, [p.ip], true));
  });
}

export async function deletePodsNow(pool: ApiPool, namespace: string, names: readonly string[]) {
  await forEachConcurrent(names, CONCURRENCY, (name, i) =>
    retrying(() =>
      pool.pick(i).delete(`/api/v1/namespaces/${namespace}/pods/${name}`, {
        kind: "DeleteOptions",
        apiVersion: "v1",
        gracePeriodSeconds: 0,
      }),
    ),
  );
}

export function createWebService(
  api: Api,
  namespace: string,
  name: string,
  selector: Record<string, string>,
) {
  return createService(api, namespace, name, {
    selector,
    ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
  });
}

/** Removes a namespace's Pods, Services and slices without the controllers a namespace delete needs. */
export async function emptyNamespace(api: Api, namespace: string, services: readonly string[]) {
  for (const s of services) await api.delete(`/api/v1/namespaces/${namespace}/services/${s}`);
  await api.delete(`/api/v1/namespaces/${namespace}/pods`, {
    kind: "DeleteOptions",
    apiVersion: "v1",
    gracePeriodSeconds: 0,
  });
  await api.delete(`/apis/discovery.k8s.io/v1/namespaces/${namespace}/endpointslices`);
}
