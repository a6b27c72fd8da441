// The cluster the explain and trace fixtures describe, as API objects. Address plan:
//   nodes     198.18.0.11 (node-1, zone-a, this node), 198.18.0.12 (node-2, zone-b), 198.18.0.13 (node-3, zone-a)
//   pods      10.244.0.0/16: 10.244.<n>.0/24 on node-n     Services 10.96.0.0/16
// fixtures/*.txt are these objects rendered for node-1 by the proxier's renderers, loaded into a real kernel and
// listed back (make-fixtures.ts writes them).
import type { Service } from "kubernetes-types/core/v1.js";
import type { Endpoint, EndpointSlice } from "kubernetes-types/discovery/v1.js";

export const NODE = { name: "node-1", zone: "zone-a", ip: "198.18.0.11" };
export const NODE_LABELS = { "topology.kubernetes.io/zone": NODE.zone };
export const CLUSTER_CIDR = "10.244.0.0/16";
export const SERVICE_CIDR = "10.96.0.0/16";
/** A pod on node-1 and a client outside the cluster. */
export const POD_IP = "10.244.1.20";
export const OUTSIDE_IP = "203.0.113.7";

function service(name: string, clusterIP: string, extra: Service["spec"] = {}): Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { namespace: "default", name },
    spec: {
      type: "ClusterIP",
      clusterIP,
      clusterIPs: [clusterIP],
      ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP" }],
      ...extra,
    },
  };
}

function endpoint(ip: string, node: number, hint?: string): Endpoint {
  return {
    addresses: [ip],
    conditions: { ready: true, serving: true, terminating: false },
    nodeName: `node-${node}`,
    zone: node === 2 ? "zone-b" : "zone-a",
    targetRef: { kind: "Pod", namespace: "default", name: `pod-${ip.split(".").slice(2).join("-")}` },
    ...(hint ? { hints: { forZones: [{ name: hint }] } } : {}),
  };
}

function slice(service: string, endpoints: Endpoint[]): EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      namespace: "default",
      name: `${service}-abcde`,
      labels: { "kubernetes.io/service-name": service },
    },
    addressType: "IPv4",
    endpoints,
    ports: [{ name: "http", port: 8080, protocol: "TCP" }],
  };
}

/** Three endpoints with zone hints: node-1 (zone-a) uses the two hinted for zone-a. */
export const hinted = {
  service: service("hinted", "10.96.0.50"),
  slices: [
    slice("hinted", [
      endpoint("10.244.1.5", 1, "zone-a"),
      endpoint("10.244.2.5", 2, "zone-b"),
      endpoint("10.244.3.5", 3, "zone-a"),
    ]),
  ],
};

/** Three endpoints, no hints, a NodePort with externalTrafficPolicy Local. */
export const web = {
  service: service("web", "10.96.0.60", {
    type: "NodePort",
    externalTrafficPolicy: "Local",
    ports: [{ name: "http", port: 80, targetPort: 8080, protocol: "TCP", nodePort: 30080 }],
  }),
  slices: [slice("web", [endpoint("10.244.1.6", 1), endpoint("10.244.2.6", 2), endpoint("10.244.3.6", 3)])],
};

/** internalTrafficPolicy Local with its only endpoint on node-2: node-1 drops. */
export const local = {
  service: service("local", "10.96.0.70", { internalTrafficPolicy: "Local" }),
  slices: [slice("local", [endpoint("10.244.2.7", 2)])],
};

/** No endpoints at all: rejected. */
export const empty = { service: service("empty", "10.96.0.80"), slices: [slice("empty", [])] };

/** ClientIP session affinity, two endpoints. */
export const sticky = {
  service: service("sticky", "10.96.0.90", {
    sessionAffinity: "ClientIP",
    sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
  }),
  slices: [slice("sticky", [endpoint("10.244.1.9", 1), endpoint("10.244.2.9", 2)])],
};

export const cluster = [hinted, web, local, empty, sticky];
export const services = cluster.map((c) => c.service);
export const slices = cluster.flatMap((c) => c.slices);
