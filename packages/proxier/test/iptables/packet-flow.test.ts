// Behaviour tests: packets traced through the golden cluster's rules in a FakeIPTables.
// Address plan: ../../src/testing/fixtures.ts and ../golden-cluster.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeIPTables } from "../../src/iptables/fake.js";
import { renderIPTables } from "../../src/iptables/render.js";
import { ensureJumpChains } from "../../src/iptables/skeleton.js";
import { tracePacket } from "../../src/iptables/tracer.js";
import {
  buildMaps,
  EXTERNAL_CLIENT,
  EXTERNAL_CLIENT_BLOCKED,
  iptOptions,
  NODE_IP,
  POD_CLIENT,
} from "../../src/testing/fixtures.js";
import { goldenServices, goldenSlices } from "../golden-cluster.js";

const ipt = new FakeIPTables();
ensureJumpChains(ipt);
ipt.restore(
  renderIPTables(iptOptions(), {
    ...buildMaps(
      "IPv4",
      goldenServices((n) => `172.30.0.${n}`),
      goldenSlices(),
    ),
    now: 0,
  }).restore,
);

interface Case {
  name: string;
  sourceIP: string;
  protocol?: "tcp" | "udp";
  destIP: string;
  destPort: number;
  output: string;
  masq: boolean;
}

const cases: Case[] = [
  {
    name: "pod to ClusterIP",
    sourceIP: POD_CLIENT,
    destIP: "172.30.0.41",
    destPort: 80,
    output: "10.180.0.1:80, 10.180.1.1:80",
    masq: false,
  },
  {
    name: "off-cluster to ClusterIP is masqueraded",
    sourceIP: EXTERNAL_CLIENT,
    destIP: "172.30.0.41",
    destPort: 80,
    output: "10.180.0.1:80, 10.180.1.1:80",
    masq: true,
  },
  {
    name: "ClusterIP on a wrong port passes un-NATed",
    sourceIP: POD_CLIENT,
    destIP: "172.30.0.41",
    destPort: 81,
    output: "ACCEPT",
    masq: false,
  },
  {
    name: "ETP=Local without local endpoint: external drops",
    sourceIP: EXTERNAL_CLIENT,
    destIP: "1.2.3.4",
    destPort: 80,
    output: "DROP",
    masq: false,
  },
  {
    name: "ETP=Local without local endpoint: NodePort drops",
    sourceIP: EXTERNAL_CLIENT,
    destIP: NODE_IP,
    destPort: 30001,
    output: "DROP",
    masq: false,
  },
  {
    name: "ETP=Local: pod to external IP is short-circuited",
    sourceIP: POD_CLIENT,
    destIP: "192.168.99.22",
    destPort: 80,
    output: "10.180.1.2:80",
    masq: false,
  },
  {
    name: "ETP=Local: host to LB IP is short-circuited and masqueraded",
    sourceIP: NODE_IP,
    destIP: "1.2.3.4",
    destPort: 80,
    output: "10.180.1.2:80",
    masq: true,
  },
  {
    name: "health check node port is accepted",
    sourceIP: EXTERNAL_CLIENT,
    destIP: NODE_IP,
    destPort: 30000,
    output: "ACCEPT",
    masq: false,
  },
  {
    name: "NodePort is masqueraded",
    sourceIP: EXTERNAL_CLIENT,
    destIP: NODE_IP,
    destPort: 30003,
    output: "10.180.0.3:80",
    masq: true,
  },
  {
    name: "ITP=Local without local endpoint drops",
    sourceIP: POD_CLIENT,
    destIP: "172.30.0.44",
    destPort: 80,
    output: "DROP",
    masq: false,
  },
  {
    name: "LB source range allows",
    sourceIP: EXTERNAL_CLIENT,
    destIP: "5.6.7.8",
    destPort: 80,
    output: "10.180.0.5:80, 10.180.1.5:80",
    masq: true,
  },
  {
    name: "LB source range blocks",
    sourceIP: EXTERNAL_CLIENT_BLOCKED,
    destIP: "5.6.7.8",
    destPort: 80,
    output: "DROP",
    masq: false,
  },
  {
    name: "NodePort ignores source ranges",
    sourceIP: EXTERNAL_CLIENT_BLOCKED,
    destIP: NODE_IP,
    destPort: 30002,
    output: "10.180.0.5:80, 10.180.1.5:80",
    masq: true,
  },
  {
    name: "no endpoints rejects",
    sourceIP: POD_CLIENT,
    destIP: "172.30.0.46",
    destPort: 80,
    output: "REJECT",
    masq: false,
  },
  {
    name: "ETP=Local with local endpoint keeps the source",
    sourceIP: EXTERNAL_CLIENT,
    destIP: NODE_IP,
    destPort: 30007,
    output: "10.180.0.7:80",
    masq: false,
  },
  {
    name: "ETP=Local: pod to NodePort uses all endpoints",
    sourceIP: POD_CLIENT,
    destIP: NODE_IP,
    destPort: 30007,
    output: "10.180.0.7:80, 10.180.1.7:80",
    masq: false,
  },
  {
    name: "terminating-only endpoint is the fallback",
    sourceIP: POD_CLIENT,
    destIP: "172.30.0.48",
    destPort: 80,
    output: "10.180.1.8:80",
    masq: false,
  },
  {
    name: "UDP to three endpoints",
    sourceIP: POD_CLIENT,
    protocol: "udp",
    destIP: "172.30.0.49",
    destPort: 53,
    output: "10.180.0.9:53, 10.180.1.19:53, 10.180.1.9:53",
    masq: false,
  },
  {
    name: "TCP to a UDP service is not NATed",
    sourceIP: POD_CLIENT,
    destIP: "172.30.0.49",
    destPort: 53,
    output: "ACCEPT",
    masq: false,
  },
  {
    name: "hairpin is masqueraded",
    sourceIP: "10.180.0.3",
    destIP: "172.30.0.43",
    destPort: 80,
    output: "10.180.0.3:80",
    masq: true,
  },
];

describe("iptables packet flow", () => {
  for (const c of cases) {
    test(c.name, () => {
      const r = tracePacket(ipt, [NODE_IP], c);
      assert.deepEqual(r.errors, []);
      assert.equal(r.output, c.output);
      assert.equal(r.masq, c.masq);
    });
  }
});
