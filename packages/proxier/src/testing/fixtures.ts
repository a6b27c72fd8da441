// Shared fixtures. Address plan (every test uses it):
//   pods            10.180.0.0/16   (detect-local cluster CIDR 10.0.0.0/8)   fd00:10:180::/64
//   ClusterIPs      172.30.0.0/16                                            fd00:172:30::/108
//   nodes           192.168.0.0/24, this node "node1" is 192.168.0.2         fd00:192:168::2
//   external        203.0.113.0/24 (clients); LB source range 203.0.113.0/25  fd00:203:113::/64
//   LB VIPs         1.2.3.4, 5.6.7.8                                         fd00:1:2:3::4

import type { IPFamily } from "@switchyard/basics";
import type { Service } from "kubernetes-types/core/v1.js";
import type { Endpoint, EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { IPTablesOptions } from "../iptables/options.js";
import { EndpointsChangeTracker, type EndpointsMap } from "../model/endpoints-change-tracker.js";
import { ServiceChangeTracker, type ServicePortMap } from "../model/service-change-tracker.js";
import type { ServicePortInfo } from "../model/service-port.js";
import type { NFTablesOptions } from "../nftables/options.js";

export const NODE_NAME = "node1";
export const NODE_IP = "192.168.0.2";
export const NODE_IPV6 = "fd00:192:168::2";
export const EXTERNAL_CLIENT = "203.0.113.2";
export const EXTERNAL_CLIENT_BLOCKED = "203.0.113.130";
export const POD_CLIENT = "10.180.0.99";

export function nftOptions(family: IPFamily = "IPv4", extra: Partial<NFTablesOptions> = {}): NFTablesOptions {
  const v4 = family === "IPv4";
  return {
    family,
    nodeName: NODE_NAME,
    nodeLabels: { "topology.kubernetes.io/zone": "zone-a" },
    nodeIP: v4 ? NODE_IP : NODE_IPV6,
    nodePortAddresses: [v4 ? NODE_IP : NODE_IPV6],
    masqueradeBit: 14,
    localDetector: { mode: "ClusterCIDR", cidr: v4 ? "10.0.0.0/8" : "fd00:10::/32" },
    serviceCIDRs: [v4 ? "172.30.0.0/16" : "fd00:172:30::/108"],
    ...extra,
  };
}

export function makeService(
  ns: string,
  name: string,
  spec: Service["spec"],
  status?: Service["status"],
): Service {
  return { apiVersion: "v1", kind: "Service", metadata: { namespace: ns, name }, spec, status };
}

export function makeSlice(
  ns: string,
  svc: string,
  suffix: string,
  endpoints: Endpoint[],
  ports: { name?: string; port: number; protocol?: "TCP" | "UDP" | "SCTP" }[],
  addressType: "IPv4" | "IPv6" = "IPv4",
): EndpointSlice {
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: { namespace: ns, name: `${svc}-${suffix}`, labels: { "kubernetes.io/service-name": svc } },
    addressType,
    endpoints,
    ports: ports.map((p) => ({ name: p.name, port: p.port, protocol: p.protocol ?? "TCP" })),
  };
}

/** Runs objects through the trackers, as the proxier shell would. */
export function buildMaps(
  family: IPFamily,
  services: Service[],
  slices: EndpointSlice[],
): { services: ServicePortMap; endpoints: EndpointsMap } {
  const sct = new ServiceChangeTracker(family);
  for (const s of services) sct.update(undefined, s);
  const ect = new EndpointsChangeTracker({ family, nodeName: NODE_NAME });
  for (const s of slices) ect.endpointSliceUpdate(s, false);
  return { services: sct.apply().services, endpoints: ect.apply().endpoints };
}

export function iptOptions(family: IPFamily = "IPv4", extra: Partial<IPTablesOptions> = {}): IPTablesOptions {
  const v4 = family === "IPv4";
  return {
    family,
    nodeName: NODE_NAME,
    nodeLabels: { "topology.kubernetes.io/zone": "zone-a" },
    nodeIP: v4 ? NODE_IP : NODE_IPV6,
    nodePortAddresses: "all",
    masqueradeBit: 14,
    localDetector: { mode: "ClusterCIDR", cidr: v4 ? "10.0.0.0/8" : "fd00:10::/32" },
    localhostNodePorts: true,
    randomFully: true,
    ...extra,
  };
}

/** A ClusterIP service port with no traffic policy set; override what a test needs. */
export function svc(o: Partial<ServicePortInfo> = {}): ServicePortInfo {
  return {
    name: { namespace: "ns1", name: "svc1", port: "p80", protocol: "TCP" },
    clusterIP: "172.30.0.41",
    port: 80,
    protocol: "TCP",
    nodePort: 0,
    externalIPs: [],
    loadBalancerVIPs: [],
    loadBalancerSourceRanges: [],
    healthCheckNodePort: 0,
    stickyMaxAgeSeconds: 0,
    externalPolicyLocal: false,
    internalPolicyLocal: false,
    ...o,
  };
}

/** One TCP Service, ns1/svc1 at 172.30.0.41:80 (port "p80"), for the sync-loop suites. */
export const svc1 = makeService("ns1", "svc1", {
  clusterIP: "172.30.0.41",
  ports: [{ name: "p80", port: 80, protocol: "TCP" }],
});

/** svc1's one slice ("a"), with these ready endpoint addresses on this node. */
export const svc1Slice = (ips: string[]): EndpointSlice =>
  makeSlice(
    "ns1",
    "svc1",
    "a",
    ips.map((ip) => ({ addresses: [ip], nodeName: NODE_NAME })),
    [{ name: "p80", port: 80 }],
  );
