/**
 * The fixture cluster. Address plan (as in kube-proxy's tests): pods 10.0.0.0/8, ClusterIPs 172.30.0.0/16
 * and fd00:30::/64, pod IPv6 fd00::/64. Zone cluster.local, plugin ttl 30 unless a case says otherwise.
 */
import type { Service } from "kubernetes-types/core/v1.js";
import type { Endpoint, EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { FixtureCluster, type FixtureSelectors } from "../../src/plugins/kubernetes/cluster-view.js";

function service(ns: string, name: string, spec: Service["spec"], labels?: Record<string, string>): Service {
  return { metadata: { namespace: ns, name, ...(labels ? { labels } : {}) }, spec };
}

/** Labels for the `labels` cases; the EndpointSlice controller copies a Service's labels to its slices. */
const webLabels = { app: "web", env: "prod" };

const http = { name: "http", port: 80, protocol: "TCP" };

function slice(
  ns: string,
  svc: string,
  addressType: "IPv4" | "IPv6",
  endpoints: Endpoint[],
  ports: EndpointSlice["ports"] = [http],
  labels: Record<string, string> = {},
): EndpointSlice {
  return {
    metadata: {
      namespace: ns,
      name: `${svc}-${addressType.toLowerCase()}`,
      labels: { ...labels, "kubernetes.io/service-name": svc },
    },
    addressType,
    endpoints,
    ports,
  };
}

export const services: Service[] = [
  service(
    "testns",
    "svc1",
    {
      clusterIP: "172.30.0.10",
      clusterIPs: ["172.30.0.10"],
      ports: [http, { name: "dns", port: 53, protocol: "UDP" }],
    },
    webLabels,
  ),
  service("testns", "dual", {
    clusterIP: "172.30.0.20",
    clusterIPs: ["172.30.0.20", "fd00:30::20"],
    ports: [http],
  }),
  service("testns", "hdls", { clusterIP: "None", ports: [http] }, { app: "db", env: "prod" }),
  service("testns", "hdls6", { clusterIP: "None", ports: [http] }),
  service("testns", "empty", { clusterIP: "172.30.0.30", clusterIPs: ["172.30.0.30"], ports: [http] }),
  service("testns", "emptyhdls", { clusterIP: "None", ports: [http] }),
  service("testns", "noports", { clusterIP: "None" }),
  service("testns", "ext", { type: "ExternalName", externalName: "example.org" }),
  service("testns", "extin", { type: "ExternalName", externalName: "svc1.testns.svc.cluster.local" }),
  service("other", "svc1", { clusterIP: "172.30.0.40", clusterIPs: ["172.30.0.40"], ports: [http] }),
];

export const endpointSlices: EndpointSlice[] = [
  slice(
    "testns",
    "svc1",
    "IPv4",
    [{ addresses: ["10.0.0.1"], conditions: { ready: true } }],
    [http],
    webLabels,
  ),
  slice(
    "testns",
    "hdls",
    "IPv4",
    [
      { addresses: ["10.0.0.1"], hostname: "web-0", conditions: { ready: true } },
      {
        addresses: ["10.0.0.2"],
        conditions: { ready: true },
        targetRef: { kind: "Pod", namespace: "testns", name: "hdls-pod-b" },
      },
      { addresses: ["10.0.0.3"], conditions: { ready: false } },
      { addresses: ["10.0.0.4"], conditions: {} },
    ],
    [http],
    { app: "db", env: "prod" },
  ),
  slice("testns", "hdls6", "IPv6", [{ addresses: ["fd00::5"], conditions: { ready: true } }]),
  slice("testns", "emptyhdls", "IPv4", [{ addresses: ["10.0.0.7"], conditions: { ready: false } }]),
  slice("testns", "noports", "IPv4", [{ addresses: ["10.0.0.9"], conditions: { ready: true } }], []),
  slice("other", "svc1", "IPv4", [{ addresses: ["10.0.2.1"], conditions: { ready: true } }]),
];

/** With `selectors`, the cluster filters as the API server does for `labels` / `namespace_labels`. */
export function fixtureCluster(selectors: FixtureSelectors = {}): FixtureCluster {
  return new FixtureCluster(
    {
      services,
      endpointSlices,
      namespaces: ["testns", "other", "default"],
      namespaceLabels: { testns: { team: "a" }, other: { team: "b" } },
      pods: [
        {
          metadata: { namespace: "testns", name: "web-0", labels: webLabels },
          status: { podIP: "10.0.0.1", podIPs: [{ ip: "10.0.0.1" }] },
        },
      ],
    },
    selectors,
  );
}
