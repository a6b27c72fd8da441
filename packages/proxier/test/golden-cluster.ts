// The representative cluster shared by the iptables golden tests and the upstream diff.
// ClusterIPs come from `clusterIP(n)` so the diff can use the lab API server's range.
// Pods: 10.180.0.0/24 on node1 (this node), 10.180.1.0/24 on node2.
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { renderNFTables } from "../src/nftables/render.js";
import { buildMaps, makeService, makeSlice, NODE_NAME, nftOptions } from "../src/testing/fixtures.js";

const p80 = [{ name: "p80", port: 80 }];
const here = { nodeName: NODE_NAME };
const there = { nodeName: "node2" };

export function goldenServices(clusterIP: (n: number) => string): Service[] {
  const tcp80 = (nodePort?: number) => [{ name: "p80", port: 80, protocol: "TCP" as const, nodePort }];
  return [
    // ClusterIP with two endpoints: a probability rule.
    makeService("ns1", "svc1", { clusterIP: clusterIP(41), ports: tcp80() }),
    // ETP=Local LoadBalancer whose only endpoint is elsewhere: external traffic is dropped.
    makeService(
      "ns2",
      "svc2",
      {
        type: "LoadBalancer",
        externalTrafficPolicy: "Local",
        clusterIP: clusterIP(42),
        externalIPs: ["192.168.99.22"],
        healthCheckNodePort: 30000,
        ports: tcp80(30001),
      },
      { loadBalancer: { ingress: [{ ip: "1.2.3.4", ipMode: "VIP" }] } },
    ),
    makeService("ns3", "svc3", { type: "NodePort", clusterIP: clusterIP(43), ports: tcp80(30003) }),
    // ITP=Local without a local endpoint: ClusterIP traffic is dropped.
    makeService("ns4", "svc4", { clusterIP: clusterIP(44), internalTrafficPolicy: "Local", ports: tcp80() }),
    // LoadBalancer with source ranges and ClientIP affinity.
    makeService(
      "ns5",
      "svc5",
      {
        type: "LoadBalancer",
        clusterIP: clusterIP(45),
        loadBalancerSourceRanges: ["203.0.113.0/25"],
        sessionAffinity: "ClientIP",
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        ports: tcp80(30002),
      },
      { loadBalancer: { ingress: [{ ip: "5.6.7.8", ipMode: "VIP" }] } },
    ),
    // No endpoints at all: rejected.
    makeService("ns6", "svc6", { clusterIP: clusterIP(46), ports: tcp80() }),
    // ETP=Local NodePort with a local endpoint: the KUBE-SVL chain.
    makeService("ns7", "svc7", {
      type: "NodePort",
      externalTrafficPolicy: "Local",
      clusterIP: clusterIP(47),
      ports: tcp80(30007),
    }),
    // Only a serving-but-terminating endpoint: used as a fallback.
    makeService("ns8", "svc8", { clusterIP: clusterIP(48), ports: tcp80() }),
    // Named UDP port with three endpoints.
    makeService("ns9", "svc9", {
      clusterIP: clusterIP(49),
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
    }),
  ];
}

export function goldenSlices(): EndpointSlice[] {
  return [
    makeSlice(
      "ns1",
      "svc1",
      "a",
      [
        { addresses: ["10.180.0.1"], ...here },
        { addresses: ["10.180.1.1"], ...there },
      ],
      p80,
    ),
    makeSlice("ns2", "svc2", "a", [{ addresses: ["10.180.1.2"], ...there }], p80),
    makeSlice("ns3", "svc3", "a", [{ addresses: ["10.180.0.3"], ...here }], p80),
    makeSlice("ns4", "svc4", "a", [{ addresses: ["10.180.1.4"], ...there }], p80),
    makeSlice(
      "ns5",
      "svc5",
      "a",
      [
        { addresses: ["10.180.0.5"], ...here },
        { addresses: ["10.180.1.5"], ...there },
      ],
      p80,
    ),
    makeSlice(
      "ns7",
      "svc7",
      "a",
      [
        { addresses: ["10.180.0.7"], ...here },
        { addresses: ["10.180.1.7"], ...there },
      ],
      p80,
    ),
    makeSlice(
      "ns8",
      "svc8",
      "a",
      [
        {
          addresses: ["10.180.1.8"],
          conditions: { ready: false, serving: true, terminating: true },
          ...there,
        },
      ],
      p80,
    ),
    makeSlice(
      "ns9",
      "svc9",
      "a",
      ["10.180.0.9", "10.180.1.9", "10.180.1.19"].map((ip) => ({ addresses: [ip], nodeName: "node2" })),
      [{ name: "dns", port: 53, protocol: "UDP" }],
    ),
  ];
}

/** The golden cluster's IPv4 nftables full sync (ClusterIPs in 172.30.0.0/24), as the kernel tests apply it. */
export function goldenNFTablesFullSync() {
  const services = goldenServices((n) => `172.30.0.${n}`);
  return renderNFTables(nftOptions("IPv4"), { ...buildMaps("IPv4", services, goldenSlices()), now: 0 });
}
