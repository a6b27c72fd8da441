import { type HttpRestClient, isAlreadyExists } from "@switchyard/kube";
import type { Service } from "kubernetes-types/core/v1.js";

/**
 * The scale scenario's Services: selectorless, each with one EndpointSlice written by hand, the way the
 * proxy benchmark builds its cluster. The proxy only sees Services and slices, so no pods are needed for the
 * bulk: their endpoints are addresses in 198.19.0.0/16 (the benchmarking range; nothing answers there and no
 * packet is sent to them). The first and the last Service of each size point at real echo pods instead, for
 * the first-packet measurement. The slices carry their own managed-by, so the slice controller leaves them be.
 */
export const scaleNamespace = "switchyard-scenario-scale";
export const managedBy = "scenario-scale.switchyard.dev";
export const servicePort = 9000;
export const serviceName = (i: number) => `svc-${String(i).padStart(5, "0")}`;

/** The address of endpoint `e` of Service `i`; `alt` is a second address for one-endpoint changes. */
export function fakeIp(i: number, e: number, perService: number, alt = false): string {
  if (alt) return `198.19.255.${i % 250}`;
  const k = i * perService + e;
  return `198.19.${(k >> 8) & 255}.${k & 255}`;
}

/** 198.19.255.0/24 is kept for the alternates, so the bulk must fit below it. */
export const maxEndpoints = 255 * 256;

export function sliceEndpoints(ips: readonly string[]) {
  return ips.map((ip) => ({
    addresses: [ip],
    conditions: { ready: true, serving: true, terminating: false },
  }));
}

export function endpointIps(
  i: number,
  perService: number,
  real: ReadonlyMap<number, string[]>,
  altFirst = false,
) {
  return (
    real.get(i) ?? Array.from({ length: perService }, (_, e) => fakeIp(i, e, perService, altFirst && e === 0))
  );
}

/** Runs fn over [from, to) with `width` calls in flight. */
async function forEach(from: number, to: number, width: number, fn: (i: number) => Promise<void>) {
  let next = from;
  const worker = async () => {
    while (next < to) await fn(next++);
  };
  await Promise.all(Array.from({ length: width }, worker));
}

/** Creates Services [from, to) and their slices; returns every Service's ClusterIP by index. */
export async function createServices(
  client: HttpRestClient,
  from: number,
  to: number,
  perService: number,
  real: ReadonlyMap<number, string[]>,
  onProgress: (done: number) => void,
  extra: (i: number) => Record<string, unknown> = () => ({}),
): Promise<Map<number, string>> {
  const ips = new Map<number, string>();
  let done = 0;
  await forEach(from, to, 16, async (i) => {
    const name = serviceName(i);
    const svc = await client
      .call<Service>("POST", `/api/v1/namespaces/${scaleNamespace}/services`, {
        metadata: { name },
        spec: { ports: [{ name: "tcp", port: servicePort, protocol: "TCP" }], ...extra(i) },
      })
      .catch(async (err) => {
        if (!isAlreadyExists(err)) throw err;
        return client.call<Service>("GET", `/api/v1/namespaces/${scaleNamespace}/services/${name}`);
      });
    ips.set(i, svc.spec?.clusterIP ?? "");
    await client
      .call("POST", `/apis/discovery.k8s.io/v1/namespaces/${scaleNamespace}/endpointslices`, {
        apiVersion: "discovery.k8s.io/v1",
        kind: "EndpointSlice",
        metadata: {
          name: `${name}-1`,
          labels: { "kubernetes.io/service-name": name, "endpointslice.kubernetes.io/managed-by": managedBy },
        },
        addressType: "IPv4",
        endpoints: sliceEndpoints(endpointIps(i, perService, real)),
        ports: [{ name: "tcp", port: servicePort, protocol: "TCP" }],
      })
      .catch((err) => {
        if (!isAlreadyExists(err)) throw err;
      });
    if (++done % 500 === 0) onProgress(done);
  });
  return ips;
}

/** One endpoint of Service `i` moves to its alternate address, or back: a one-endpoint change. */
export async function flipOneEndpoint(client: HttpRestClient, i: number, perService: number, toAlt: boolean) {
  await client.call(
    "PATCH",
    `/apis/discovery.k8s.io/v1/namespaces/${scaleNamespace}/endpointslices/${serviceName(i)}-1`,
    { endpoints: sliceEndpoints(endpointIps(i, perService, new Map(), toAlt)) },
    "application/merge-patch+json",
  );
}
