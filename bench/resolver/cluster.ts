// The cluster both DNS servers answer from: namespaces, ClusterIP Services and headless Services with
// EndpointSlices, written straight through the API of a lab control plane (no controllers run).
import { endpointSlices, HttpRestClient, loadKubeConfig, namespaces, services } from "@switchyard/kube";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

export interface ClusterShape {
  namespaces: number;
  clusterIpPerNamespace: number;
  headlessPerNamespace: number;
  endpointsPerHeadless: number;
}

/** What was created, as the names the query files are built from. */
export interface ClusterNames {
  namespaces: string[];
  /** `svc.ns` of every ClusterIP Service. */
  clusterIp: string[];
  /** `svc.ns` of every headless Service. */
  headless: string[];
  /** `host.svc.ns` of every headless endpoint (all have a hostname and are ready). */
  endpoints: string[];
}

const MANAGED_BY = "bench.switchyard.dev";

function headlessSlice(ns: string, svc: string, index: number, count: number): EndpointSlice {
  return {
    metadata: {
      name: `${svc}-v4`,
      namespace: ns,
      labels: { "kubernetes.io/service-name": svc, "endpointslice.kubernetes.io/managed-by": MANAGED_BY },
    },
    addressType: "IPv4",
    endpoints: Array.from({ length: count }, (_, e) => ({
      addresses: [`10.${100 + Math.floor(index / 250)}.${index % 250}.${e + 1}`],
      hostname: `pod-${e}`,
      conditions: { ready: true },
    })),
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  };
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pooled<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await work(item);
    }
  };
  await Promise.all(Array.from({ length: limit }, lane));
}

export async function populate(kubeconfigPath: string, shape: ClusterShape): Promise<ClusterNames> {
  const client = new HttpRestClient(loadKubeConfig({ kubeconfig: kubeconfigPath }));
  const names: ClusterNames = { namespaces: [], clusterIp: [], headless: [], endpoints: [] };
  try {
    for (let n = 0; n < shape.namespaces; n++) names.namespaces.push(`team-${n}`);
    await pooled(names.namespaces, 4, async (ns) => {
      await client.create(namespaces, { metadata: { name: ns } });
    });
    const jobs: (() => Promise<void>)[] = [];
    let headlessIndex = 0;
    for (const ns of names.namespaces) {
      for (let s = 0; s < shape.clusterIpPerNamespace; s++) {
        const svc = `api-${s}`;
        names.clusterIp.push(`${svc}.${ns}`);
        jobs.push(async () => {
          await client.create(services, {
            metadata: { name: svc, namespace: ns },
            spec: {
              ports: [
                { name: "http", port: 80, protocol: "TCP" },
                { name: "grpc", port: 9090, protocol: "TCP" },
              ],
            },
          });
        });
      }
      for (let h = 0; h < shape.headlessPerNamespace; h++) {
        const svc = `db-${h}`;
        const index = headlessIndex++;
        names.headless.push(`${svc}.${ns}`);
        for (let e = 0; e < shape.endpointsPerHeadless; e++) names.endpoints.push(`pod-${e}.${svc}.${ns}`);
        jobs.push(async () => {
          await client.create(services, {
            metadata: { name: svc, namespace: ns },
            spec: { clusterIP: "None", ports: [{ name: "http", port: 8080, protocol: "TCP" }] },
          });
          await client.create(endpointSlices, headlessSlice(ns, svc, index, shape.endpointsPerHeadless));
        });
      }
    }
    await pooled(jobs, 8, (job) => job());
  } finally {
    client.close();
  }
  return names;
}
