// Behaviour, not text: packets traced through the fake iptables, ipset and IPVS after a sync.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { renderIPVS } from "../../src/ipvs/render.js";
import { type IPVSTracePacket, traceIPVSPacket } from "../../src/ipvs/tracer.js";
import {
  buildMaps,
  EXTERNAL_CLIENT,
  EXTERNAL_CLIENT_BLOCKED,
  makeService,
  makeSlice,
  POD_CLIENT,
} from "../../src/testing/fixtures.js";
import { FakeKernel, ipvsOptions } from "./helpers.js";

const p80 = [{ name: "p80", port: 80 }];
const tcp80 = [{ name: "p80", port: 80, protocol: "TCP" as const }];

function syncedKernel(): FakeKernel {
  const maps = buildMaps(
    "IPv4",
    [
      makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80 }),
      makeService("ns2", "svc2", {
        type: "NodePort",
        clusterIP: "172.30.0.42",
        ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
      }),
      makeService(
        "ns3",
        "svc3",
        {
          type: "LoadBalancer",
          clusterIP: "172.30.0.43",
          externalTrafficPolicy: "Local",
          healthCheckNodePort: 30000,
          loadBalancerSourceRanges: ["203.0.113.0/25"],
          ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3003 }],
        },
        { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
      ),
      makeService("ns4", "svc4", { clusterIP: "172.30.0.44", ports: tcp80 }),
    ],
    [
      makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.0.1"] }, { addresses: ["10.180.0.2"] }], p80),
      makeSlice("ns2", "svc2", "a", [{ addresses: ["10.180.0.3"], nodeName: "node1" }], p80),
      makeSlice(
        "ns3",
        "svc3",
        "a",
        [
          { addresses: ["10.180.0.5"], nodeName: "node1" },
          { addresses: ["10.180.1.5"], nodeName: "node2" },
        ],
        p80,
      ),
    ],
  );
  const kernel = new FakeKernel(["192.168.0.2"]);
  kernel.apply(renderIPVS(ipvsOptions("IPv4", { nodeAddresses: ["192.168.0.2"] }), maps));
  return kernel;
}

interface Case {
  readonly name: string;
  readonly packet: IPVSTracePacket;
  readonly output: string;
  readonly masq: boolean;
}

const cases: Case[] = [
  {
    name: "pod to ClusterIP: both endpoints, no masquerade",
    packet: { sourceIP: POD_CLIENT, destIP: "172.30.0.41", destPort: 80 },
    output: "10.180.0.1:80, 10.180.0.2:80",
    masq: false,
  },
  {
    name: "external client to ClusterIP: masqueraded",
    packet: { sourceIP: EXTERNAL_CLIENT, destIP: "172.30.0.41", destPort: 80 },
    output: "10.180.0.1:80, 10.180.0.2:80",
    masq: true,
  },
  {
    name: "ClusterIP on a port no Service uses: rejected by KUBE-IPVS-FILTER",
    packet: { sourceIP: POD_CLIENT, destIP: "172.30.0.41", destPort: 22 },
    output: "REJECT",
    masq: false,
  },
  {
    name: "ClusterIP without endpoints: IPVS has no real server",
    packet: { sourceIP: POD_CLIENT, destIP: "172.30.0.44", destPort: 80 },
    output: "REJECT",
    masq: false,
  },
  {
    name: "pod reaching itself through its ClusterIP: hairpin masquerade",
    packet: { sourceIP: "10.180.0.3", destIP: "172.30.0.42", destPort: 80 },
    output: "10.180.0.3:80",
    masq: true,
  },
  {
    name: "NodePort from outside: masqueraded",
    packet: { sourceIP: EXTERNAL_CLIENT, destIP: "192.168.0.2", destPort: 3001 },
    output: "10.180.0.3:80",
    masq: true,
  },
  {
    name: "ETP Local NodePort from outside: local endpoint only, source kept",
    packet: { sourceIP: EXTERNAL_CLIENT, destIP: "192.168.0.2", destPort: 3003 },
    output: "10.180.0.5:80",
    masq: false,
  },
  {
    name: "LB VIP from an allowed source: local endpoint, not masqueraded",
    packet: { sourceIP: EXTERNAL_CLIENT, destIP: "1.2.3.4", destPort: 80 },
    output: "10.180.0.5:80",
    masq: false,
  },
  {
    name: "LB VIP from outside the source ranges: dropped",
    packet: { sourceIP: EXTERNAL_CLIENT_BLOCKED, destIP: "1.2.3.4", destPort: 80 },
    output: "DROP",
    masq: false,
  },
  {
    name: "LB VIP from the node itself, not in the ranges: dropped by KUBE-IPVS-OUT-FILTER",
    packet: { sourceIP: "1.2.3.4", destIP: "1.2.3.4", destPort: 80, fromNode: true },
    output: "DROP",
    masq: false,
  },
  {
    name: "node to ClusterIP: balanced",
    packet: { sourceIP: "192.168.0.2", destIP: "172.30.0.41", destPort: 80, fromNode: true },
    output: "10.180.0.1:80, 10.180.0.2:80",
    masq: true,
  },
  {
    name: "node address on a non-NodePort port: host socket",
    packet: { sourceIP: EXTERNAL_CLIENT, destIP: "192.168.0.2", destPort: 22 },
    output: "LOCAL",
    masq: false,
  },
  {
    name: "somewhere else: forwarded, not ours",
    packet: { sourceIP: POD_CLIENT, destIP: "8.8.8.8", destPort: 53 },
    output: "FORWARD",
    masq: false,
  },
];

describe("ipvs packet flow", () => {
  const kernel = syncedKernel();
  for (const c of cases) {
    test(c.name, () => {
      const r = traceIPVSPacket({ ...kernel, localIPs: kernel.localIPs }, c.packet);
      assert.deepEqual(r.errors, []);
      assert.equal(r.output, c.output);
      assert.equal(r.masq, c.masq);
    });
  }

  test("removing an endpoint takes it out of the traced outcomes", () => {
    const k = new FakeKernel(["192.168.0.2"]);
    const two = buildMaps(
      "IPv4",
      [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80 })],
      [makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.0.1"] }, { addresses: ["10.180.0.2"] }], p80)],
    );
    const one = buildMaps(
      "IPv4",
      [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80 })],
      [makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.0.2"] }], p80)],
    );
    const state = k.apply(renderIPVS(ipvsOptions(), two));
    k.apply(renderIPVS(ipvsOptions(), one, state));
    const r = traceIPVSPacket(
      { ...k, localIPs: k.localIPs },
      { sourceIP: POD_CLIENT, destIP: "172.30.0.41", destPort: 80 },
    );
    assert.equal(r.output, "10.180.0.2:80");
  });
});
