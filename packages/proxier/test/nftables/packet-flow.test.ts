// Behaviour tests: packets traced through the rendered table. Address plan: ../../src/testing/fixtures.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { FakeNFTables } from "../../src/nftables/fake.js";
import { renderNFTables } from "../../src/nftables/render.js";
import { tracePacket } from "../../src/nftables/tracer.js";
import {
  buildMaps,
  EXTERNAL_CLIENT,
  EXTERNAL_CLIENT_BLOCKED,
  makeService,
  makeSlice,
  NODE_IP,
  NODE_NAME,
  nftOptions,
  POD_CLIENT,
} from "../../src/testing/fixtures.js";

interface PacketFlowTest {
  name: string;
  sourceIP: string;
  protocol?: "tcp" | "udp" | "sctp";
  destIP: string;
  destPort: number;
  output: string;
  masq?: boolean;
}

function runPacketFlowTests(
  services: Service[],
  slices: EndpointSlice[],
  cases: PacketFlowTest[],
  options = nftOptions(),
): void {
  const nft = new FakeNFTables("ip", "kube-proxy");
  nft.run(renderNFTables(options, { ...buildMaps("IPv4", services, slices), now: 0 }).transaction);
  for (const c of cases) {
    test(c.name, () => {
      const r = tracePacket(nft, [NODE_IP], c);
      assert.deepEqual(r.errors, []);
      assert.equal(r.output, c.output);
      if (c.masq !== undefined) assert.equal(r.masq, c.masq);
    });
  }
}

const p80 = [{ name: "p80", port: 80 }];

describe("no endpoints reject", () => {
  runPacketFlowTests(
    [
      makeService(
        "ns1",
        "svc1",
        {
          type: "LoadBalancer",
          clusterIP: "172.30.0.41",
          externalIPs: ["192.168.99.11"],
          ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
        },
        { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
      ),
    ],
    [],
    [
      {
        name: "pod to cluster IP",
        sourceIP: POD_CLIENT,
        destIP: "172.30.0.41",
        destPort: 80,
        output: "REJECT",
      },
      {
        name: "external to external IP",
        sourceIP: EXTERNAL_CLIENT,
        destIP: "192.168.99.11",
        destPort: 80,
        output: "REJECT",
      },
      {
        name: "external to NodePort",
        sourceIP: EXTERNAL_CLIENT,
        destIP: NODE_IP,
        destPort: 3001,
        output: "REJECT",
      },
      {
        name: "external to LB IP",
        sourceIP: EXTERNAL_CLIENT,
        destIP: "1.2.3.4",
        destPort: 80,
        output: "REJECT",
      },
    ],
  );
});

describe("cluster IP", () => {
  runPacketFlowTests(
    [
      makeService("ns1", "svc1", {
        clusterIP: "172.30.0.41",
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
      makeService("ns2", "svc2", {
        clusterIP: "172.30.0.42",
        ports: [
          { name: "p80", port: 80, protocol: "TCP" },
          { name: "dns-udp", port: 53, protocol: "UDP" },
        ],
      }),
    ],
    [
      makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.0.1"], nodeName: NODE_NAME }], p80),
      makeSlice(
        "ns2",
        "svc2",
        "a",
        [{ addresses: ["10.180.0.1"] }, { addresses: ["10.180.2.1"] }],
        [...p80, { name: "dns-udp", port: 53, protocol: "UDP" }],
      ),
    ],
    [
      {
        name: "simple",
        sourceIP: "10.180.0.2",
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.0.1:80",
        masq: false,
      },
      {
        name: "hairpin",
        sourceIP: "10.180.0.1",
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.0.1:80",
        masq: true,
      },
      {
        name: "multiple endpoints",
        sourceIP: "10.180.0.2",
        destIP: "172.30.0.42",
        destPort: 80,
        output: "10.180.0.1:80, 10.180.2.1:80",
        masq: false,
      },
      {
        name: "udp port",
        sourceIP: "10.180.0.2",
        protocol: "udp",
        destIP: "172.30.0.42",
        destPort: 53,
        output: "10.180.0.1:53, 10.180.2.1:53",
      },
      {
        name: "tcp-only port rejects udp",
        sourceIP: "10.180.0.2",
        protocol: "udp",
        destIP: "172.30.0.42",
        destPort: 80,
        output: "REJECT",
      },
      {
        name: "undefined port",
        sourceIP: "10.180.0.2",
        destIP: "172.30.0.41",
        destPort: 443,
        output: "REJECT",
      },
      {
        name: "unallocated cluster IP",
        sourceIP: "10.180.0.2",
        destIP: "172.30.0.50",
        destPort: 80,
        output: "DROP",
      },
      {
        name: "off-cluster source is masqueraded",
        sourceIP: EXTERNAL_CLIENT,
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.0.1:80",
        masq: true,
      },
    ],
  );
});

describe("load balancer with source ranges", () => {
  runPacketFlowTests(
    [
      makeService(
        "ns1",
        "svc1",
        {
          type: "LoadBalancer",
          clusterIP: "172.30.0.41",
          loadBalancerSourceRanges: ["192.168.0.0/24", " 203.0.113.0/25"],
          ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
        },
        { loadBalancer: { ingress: [{ ip: "1.2.3.4" }, { ip: "5.6.7.8" }] } },
      ),
    ],
    [makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.0.1"] }], p80)],
    [
      {
        name: "pod to cluster IP",
        sourceIP: "10.0.0.2",
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.0.1:80",
        masq: false,
      },
      {
        name: "external to NodePort",
        sourceIP: EXTERNAL_CLIENT,
        destIP: NODE_IP,
        destPort: 3001,
        output: "10.180.0.1:80",
        masq: true,
      },
      {
        name: "NodePort bypasses source ranges",
        sourceIP: EXTERNAL_CLIENT_BLOCKED,
        destIP: NODE_IP,
        destPort: 3001,
        output: "10.180.0.1:80",
        masq: true,
      },
      {
        name: "accepted external to LB1",
        sourceIP: EXTERNAL_CLIENT,
        destIP: "1.2.3.4",
        destPort: 80,
        output: "10.180.0.1:80",
        masq: true,
      },
      {
        name: "blocked external to LB2",
        sourceIP: EXTERNAL_CLIENT_BLOCKED,
        destIP: "5.6.7.8",
        destPort: 80,
        output: "DROP",
      },
      { name: "pod to LB is blocked", sourceIP: "10.0.0.2", destIP: "1.2.3.4", destPort: 80, output: "DROP" },
      {
        name: "node to LB is allowed",
        sourceIP: NODE_IP,
        destIP: "1.2.3.4",
        destPort: 80,
        output: "10.180.0.1:80",
        masq: true,
      },
      {
        name: "node to LB, SNATted to the LB IP",
        sourceIP: "5.6.7.8",
        destIP: "5.6.7.8",
        destPort: 80,
        output: "10.180.0.1:80",
        masq: true,
      },
    ],
  );
});

describe("external traffic policy Local", () => {
  const svc = (name: string, ip: string, nodePort: number) =>
    makeService(
      "ns1",
      name,
      {
        type: "LoadBalancer",
        externalTrafficPolicy: "Local",
        clusterIP: ip,
        ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort }],
      },
      { loadBalancer: { ingress: [{ ip: name === "local" ? "1.2.3.4" : "5.6.7.8" }] } },
    );
  runPacketFlowTests(
    [svc("local", "172.30.0.41", 3001), svc("remote", "172.30.0.42", 3002)],
    [
      makeSlice(
        "ns1",
        "local",
        "a",
        [
          { addresses: ["10.180.0.1"], nodeName: NODE_NAME },
          { addresses: ["10.180.2.1"], nodeName: "node2" },
        ],
        p80,
      ),
      makeSlice("ns1", "remote", "a", [{ addresses: ["10.180.2.2"], nodeName: "node2" }], p80),
    ],
    [
      {
        name: "external to LB keeps source, local endpoint only",
        sourceIP: EXTERNAL_CLIENT,
        destIP: "1.2.3.4",
        destPort: 80,
        output: "10.180.0.1:80",
        masq: false,
      },
      {
        name: "external to NodePort, local endpoint only",
        sourceIP: EXTERNAL_CLIENT,
        destIP: NODE_IP,
        destPort: 3001,
        output: "10.180.0.1:80",
        masq: false,
      },
      {
        name: "pod to LB is short-circuited to all endpoints",
        sourceIP: "10.180.0.5",
        destIP: "1.2.3.4",
        destPort: 80,
        output: "10.180.0.1:80, 10.180.2.1:80",
        masq: false,
      },
      {
        name: "node to LB is short-circuited and masqueraded",
        sourceIP: NODE_IP,
        destIP: "1.2.3.4",
        destPort: 80,
        output: "10.180.0.1:80, 10.180.2.1:80",
        masq: true,
      },
      {
        name: "external to LB without local endpoints is dropped",
        sourceIP: EXTERNAL_CLIENT,
        destIP: "5.6.7.8",
        destPort: 80,
        output: "DROP",
      },
      {
        name: "external to NodePort without local endpoints is dropped",
        sourceIP: EXTERNAL_CLIENT,
        destIP: NODE_IP,
        destPort: 3002,
        output: "DROP",
      },
      {
        name: "pod to LB without local endpoints still works",
        sourceIP: "10.180.0.5",
        destIP: "5.6.7.8",
        destPort: 80,
        output: "10.180.2.2:80",
      },
    ],
  );
});

describe("internal traffic policy Local", () => {
  runPacketFlowTests(
    [
      makeService("ns1", "has-local", {
        clusterIP: "172.30.0.41",
        internalTrafficPolicy: "Local",
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
      makeService("ns1", "no-local", {
        clusterIP: "172.30.0.42",
        internalTrafficPolicy: "Local",
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
    ],
    [
      makeSlice(
        "ns1",
        "has-local",
        "a",
        [
          { addresses: ["10.180.0.1"], nodeName: NODE_NAME },
          { addresses: ["10.180.2.1"], nodeName: "node2" },
        ],
        p80,
      ),
      makeSlice("ns1", "no-local", "a", [{ addresses: ["10.180.2.2"], nodeName: "node2" }], p80),
    ],
    [
      {
        name: "only the local endpoint",
        sourceIP: "10.180.0.5",
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.0.1:80",
      },
      {
        name: "no local endpoint drops",
        sourceIP: "10.180.0.5",
        destIP: "172.30.0.42",
        destPort: 80,
        output: "DROP",
      },
    ],
  );
});

describe("terminating endpoints", () => {
  runPacketFlowTests(
    [
      makeService("ns1", "svc1", {
        clusterIP: "172.30.0.41",
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
    ],
    [
      makeSlice(
        "ns1",
        "svc1",
        "a",
        [
          { addresses: ["10.180.0.1"], conditions: { ready: false, serving: true, terminating: true } },
          { addresses: ["10.180.0.2"], conditions: { ready: false, serving: false, terminating: true } },
        ],
        p80,
      ),
    ],
    [
      {
        name: "falls back to serving-terminating",
        sourceIP: "10.180.0.5",
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.0.1:80",
      },
    ],
  );
});

describe("session affinity", () => {
  runPacketFlowTests(
    [
      makeService("ns1", "svc1", {
        clusterIP: "172.30.0.41",
        sessionAffinity: "ClientIP",
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
    ],
    [
      makeSlice(
        "ns1",
        "svc1",
        "a",
        [{ addresses: ["10.180.0.1"], nodeName: NODE_NAME }, { addresses: ["10.180.2.1"] }],
        p80,
      ),
    ],
    [
      {
        name: "a new client may get any endpoint",
        sourceIP: "10.180.0.2",
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.0.1:80, 10.180.2.1:80",
        masq: false,
      },
      {
        name: "hairpin through an endpoint chain is masqueraded",
        sourceIP: "10.180.0.1",
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.0.1:80, 10.180.2.1:80",
        masq: true,
      },
    ],
  );
});

describe("masquerade all", () => {
  runPacketFlowTests(
    [
      makeService("ns1", "svc1", {
        clusterIP: "172.30.0.41",
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
    ],
    [makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.2.1"] }], p80)],
    [
      {
        name: "pod to cluster IP is masqueraded too",
        sourceIP: "10.180.0.2",
        destIP: "172.30.0.41",
        destPort: 80,
        output: "10.180.2.1:80",
        masq: true,
      },
    ],
    nftOptions("IPv4", { masqueradeAll: true }),
  );
});
