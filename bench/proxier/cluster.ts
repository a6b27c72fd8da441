// The cluster both proxies see: N Services x 10 endpoints, written straight to the API server (no pods,
// no controllers), as an EndpointSlice controller would have left them. Service #1 and the last Service
// of every size get the real listeners of the node namespace's pods; every other endpoint is an address
// nothing answers on, which is enough for rules to be written. Service #1 has a second port, for the steady
// TCP stream of the packet measurement (cpu-per-packet.ts), to a sink the bench starts in each pod.

import { Api as BenchApi } from "@switchyard/testbed";
import type { Service } from "kubernetes-types/core/v1.js";

export const BENCH_NS = "bench";
export const NODE_NAME = "node1";
export const ENDPOINTS_PER_SERVICE = 10;
/** The pods (in each proxy's node namespace) behind Service #1 and the last Service. */
export const REAL_POD_IPS = ["10.180.0.1", "10.180.0.2", "10.180.0.3"];
/** Service #1's second port and its endpoints' (the pods' stream sinks). */
export const STREAM_PORT = 5001;

/** The lab's admin client; it keeps its TLS connections (thousands of writes). */
export { BenchApi };

/** Runs `fn` over 0..count-1 with `width` calls in flight; a failed call is retried a few times. */
export async function forEachConcurrent(
  from: number,
  to: number,
  width: number,
  fn: (i: number) => Promise<void>,
): Promise<void> {
  let next = from;
  const worker = async () => {
    while (next < to) {
      const i = next++;
      for (let attempt = 0; ; attempt++) {
        try {
          await fn(i);
          break;
        } catch (err) {
          if (attempt >= 4) throw err;
          await new Promise((r) => setTimeout(r, 200 * (attempt + 1)));
        }
      }
    }
  };
  await Promise.all(Array.from({ length: width }, worker));
}

export const serviceName = (i: number) => `svc-${String(i).padStart(5, "0")}`;

/** Unreachable endpoint addresses: 10.200.0.0 onwards, one per (service, endpoint); `alt` gives a second set. */
export function fakeIP(service: number, endpoint: number, alt = false): string {
  const k = service * ENDPOINTS_PER_SERVICE + endpoint;
  const base = alt ? 202 : 200;
  return `10.${base + (k >> 16)}.${(k >> 8) & 255}.${k & 255}`;
}

function endpoints(ips: readonly string[], nodeName: (ip: string) => string) {
  return ips.map((ip) => ({
    addresses: [ip],
    nodeName: nodeName(ip),
    conditions: { ready: true, serving: true, terminating: false },
  }));
}

/** The endpoint list of Service `i`; `realServices` are the indices backed by the pods. */
export function endpointsOf(i: number, realServices: ReadonlySet<number>, altFirst = false) {
  if (realServices.has(i)) return endpoints(REAL_POD_IPS, () => NODE_NAME);
  const ips = Array.from({ length: ENDPOINTS_PER_SERVICE }, (_, e) => fakeIP(i, e, altFirst && e === 0));
  return endpoints(ips, () => "node2");
}

export async function createBase(api: BenchApi, nodeIP: string): Promise<void> {
  await api.call("POST", "/api/v1/namespaces", { metadata: { name: BENCH_NS } });
  await api.call("POST", "/api/v1/nodes", {
    metadata: { name: NODE_NAME, labels: { "kubernetes.io/hostname": NODE_NAME } },
  });
  await api.call("PATCH", `/api/v1/nodes/${NODE_NAME}/status`, {
    status: { addresses: [{ type: "InternalIP", address: nodeIP }] },
  });
}

/** Every Service's port 80, and Service #1's stream port (its endpoints' ports are the same). */
const portsOf = (i: number) => [
  { name: "http", port: 80 },
  ...(i === 0 ? [{ name: "stream", port: STREAM_PORT }] : []),
];

/** Creates Services [from, to) and their slices; returns the ClusterIPs of the `realServices` among them. */
export async function createServices(
  api: BenchApi,
  from: number,
  to: number,
  realServices: ReadonlySet<number>,
  progress: (done: number) => void,
): Promise<Map<number, string>> {
  const clusterIPs = new Map<number, string>();
  let done = 0;
  await forEachConcurrent(from, to, 24, async (i) => {
    const name = serviceName(i);
    const ports = portsOf(i);
    let svc: Service;
    try {
      svc = await api.call<Service>("POST", `/api/v1/namespaces/${BENCH_NS}/services`, {
        metadata: { name },
        spec: { ports: ports.map((p) => ({ ...p, protocol: "TCP" })) },
      });
    } catch (err) {
      // a retry after a lost answer: the Service is there already
      if (!/409/.test(String(err))) throw err;
      svc = await api.call<Service>("GET", `/api/v1/namespaces/${BENCH_NS}/services/${name}`);
    }
    if (realServices.has(i)) clusterIPs.set(i, svc.spec?.clusterIP ?? "");
    await api
      .call("POST", `/apis/discovery.k8s.io/v1/namespaces/${BENCH_NS}/endpointslices`, {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: { name: `${name}-1`, labels: { "kubernetes.io/service-name": name } },
        addressType: "IPv4",
        endpoints: endpointsOf(i, realServices),
        ports: ports.map((p) => ({ ...p, protocol: "TCP" })),
      })
      .catch((err: unknown) => {
        if (!/409/.test(String(err))) throw err;
      });
    if (++done % 1000 === 0) progress(done);
  });
  return clusterIPs;
}

/** One endpoint of Service `i` moves to another (unreachable) address, or back: a single-endpoint change. */
export async function flipOneEndpoint(api: BenchApi, i: number, toAlt: boolean): Promise<void> {
  await api.call(
    "PATCH",
    `/apis/discovery.k8s.io/v1/namespaces/${BENCH_NS}/endpointslices/${serviceName(i)}-1`,
    { endpoints: endpointsOf(i, new Set(), toAlt) },
  );
}
