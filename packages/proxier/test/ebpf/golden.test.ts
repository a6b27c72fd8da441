// Golden map contents: each case's full sync written into FakeBPFMaps, dumped, decoded and printed one entry a
// line (contentsText), against test/ebpf/golden/<case>.txt. Address plan: ../../src/testing/fixtures.ts.
//
// To regenerate the files after a deliberate change, run from the repository root
//   UPDATE_GOLDEN=1 node --import tsx --test packages/proxier/test/ebpf/golden.test.ts
// and read the diff (git diff packages/proxier/test/ebpf/golden/) before committing it.
import assert from "node:assert/strict";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { contentsText } from "../../src/ebpf/contents-text.js";
import { FakeBPFMaps } from "../../src/ebpf/fake.js";
import { buildMaps, makeService, makeSlice, NODE_NAME } from "../../src/testing/fixtures.js";
import { goldenServices, goldenSlices } from "../golden-cluster.js";
import { dualServices, dualSlices } from "../golden-dual.js";
import { lineDiff } from "../nft-helpers.js";
import { ebpfOptions, syncInto } from "./helpers.js";

const GOLDEN_DIR = join(import.meta.dirname, "golden");
const UPDATE = process.env.UPDATE_GOLDEN === "1";
const REGENERATE = "UPDATE_GOLDEN=1 node --import tsx --test packages/proxier/test/ebpf/golden.test.ts";

const p80 = [{ name: "p80", port: 80 }];
const tcp80 = (nodePort?: number) => [{ name: "p80", port: 80, protocol: "TCP" as const, nodePort }];
const here = { nodeName: NODE_NAME };
const there = { nodeName: "node2" };

interface GoldenCase {
  readonly name: string;
  readonly about: string;
  readonly services: Service[];
  readonly slices: EndpointSlice[];
  readonly families?: readonly IPFamily[];
}

const cases: GoldenCase[] = [
  {
    name: "clusterip",
    about: "ClusterIPs: two endpoints (one local), TCP and UDP on one address and port, none at all",
    services: [
      makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80() }),
      makeService("ns2", "dns", {
        clusterIP: "172.30.0.10",
        ports: [
          { name: "dns", port: 53, protocol: "UDP" },
          { name: "dns-tcp", port: 53, protocol: "TCP" },
        ],
      }),
      makeService("ns3", "empty", { clusterIP: "172.30.0.43", ports: tcp80() }),
    ],
    slices: [
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
      makeSlice(
        "ns2",
        "dns",
        "a",
        [{ addresses: ["10.180.1.53"], ...there }],
        [
          { name: "dns", port: 53, protocol: "UDP" },
          { name: "dns-tcp", port: 53, protocol: "TCP" },
        ],
      ),
    ],
  },
  {
    name: "nodeport",
    about: "a NodePort with an endpoint here and one elsewhere, and one without endpoints",
    services: [
      makeService("ns1", "svc1", { type: "NodePort", clusterIP: "172.30.0.41", ports: tcp80(30001) }),
      makeService("ns1", "svc2", { type: "NodePort", clusterIP: "172.30.0.42", ports: tcp80(30002) }),
    ],
    slices: [
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
    ],
  },
  {
    name: "loadbalancer-source-ranges",
    about: "a LoadBalancer with two VIPs, an external IP and loadBalancerSourceRanges",
    services: [
      makeService(
        "ns1",
        "svc1",
        {
          type: "LoadBalancer",
          clusterIP: "172.30.0.41",
          externalIPs: ["192.168.99.11"],
          loadBalancerSourceRanges: ["192.168.0.0/24", "203.0.113.0/25"],
          ports: tcp80(30001),
        },
        { loadBalancer: { ingress: [{ ip: "1.2.3.4" }, { ip: "5.6.7.8" }] } },
      ),
    ],
    slices: [makeSlice("ns1", "svc1", "a", [{ addresses: ["10.180.1.1"], ...there }], p80)],
  },
  {
    name: "etp-local",
    about: "externalTrafficPolicy Local: one Service with a local endpoint, one with none here",
    services: ["local", "remote"].map((name, i) =>
      makeService(
        "ns1",
        name,
        {
          type: "LoadBalancer",
          externalTrafficPolicy: "Local",
          clusterIP: `172.30.0.${41 + i}`,
          ports: tcp80(30001 + i),
        },
        { loadBalancer: { ingress: [{ ip: i === 0 ? "1.2.3.4" : "5.6.7.8" }] } },
      ),
    ),
    slices: [
      makeSlice(
        "ns1",
        "local",
        "a",
        [
          { addresses: ["10.180.0.1"], ...here },
          { addresses: ["10.180.1.1"], ...there },
        ],
        p80,
      ),
      makeSlice("ns1", "remote", "a", [{ addresses: ["10.180.1.2"], ...there }], p80),
    ],
  },
  {
    name: "itp-local",
    about: "internalTrafficPolicy Local: one Service with a local endpoint, one with none here",
    services: [
      makeService("ns1", "has-local", {
        clusterIP: "172.30.0.41",
        internalTrafficPolicy: "Local",
        ports: tcp80(),
      }),
      makeService("ns1", "no-local", {
        clusterIP: "172.30.0.42",
        internalTrafficPolicy: "Local",
        ports: tcp80(),
      }),
    ],
    slices: [
      makeSlice(
        "ns1",
        "has-local",
        "a",
        [
          { addresses: ["10.180.0.1"], ...here },
          { addresses: ["10.180.1.1"], ...there },
        ],
        p80,
      ),
      makeSlice("ns1", "no-local", "a", [{ addresses: ["10.180.1.2"], ...there }], p80),
    ],
  },
  {
    name: "affinity",
    about: "ClientIP session affinity on a NodePort (timeout 600s)",
    services: [
      makeService("ns1", "svc1", {
        type: "NodePort",
        clusterIP: "172.30.0.41",
        sessionAffinity: "ClientIP",
        sessionAffinityConfig: { clientIP: { timeoutSeconds: 600 } },
        ports: tcp80(30001),
      }),
    ],
    slices: [
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
    ],
  },
  {
    name: "terminating",
    about: "no ready endpoint: serving-terminating ones are used, a non-serving one is not",
    services: [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80() })],
    slices: [
      makeSlice(
        "ns1",
        "svc1",
        "a",
        [
          {
            addresses: ["10.180.0.1"],
            conditions: { ready: false, serving: true, terminating: true },
            ...here,
          },
          {
            addresses: ["10.180.1.1"],
            conditions: { ready: false, serving: true, terminating: true },
            ...there,
          },
          {
            addresses: ["10.180.1.2"],
            conditions: { ready: false, serving: false, terminating: true },
            ...there,
          },
        ],
        p80,
      ),
    ],
  },
  {
    name: "topology-hints",
    about: "zone hints: this node is in zone-a, so only zone-a's endpoints take cluster traffic",
    services: [makeService("ns1", "svc1", { clusterIP: "172.30.0.41", ports: tcp80() })],
    slices: [
      makeSlice(
        "ns1",
        "svc1",
        "a",
        [
          { addresses: ["10.180.0.1"], zone: "zone-a", hints: { forZones: [{ name: "zone-a" }] }, ...here },
          { addresses: ["10.180.1.1"], zone: "zone-a", hints: { forZones: [{ name: "zone-a" }] }, ...there },
          {
            addresses: ["10.180.2.1"],
            zone: "zone-b",
            hints: { forZones: [{ name: "zone-b" }] },
            nodeName: "node3",
          },
        ],
        p80,
      ),
    ],
  },
  {
    name: "cluster",
    about: "the representative cluster of ../golden-cluster.ts",
    services: goldenServices((n) => `172.30.0.${n}`),
    slices: goldenSlices(),
  },
  {
    name: "dual-stack",
    about: "the representative cluster made dual-stack (../golden-dual.ts): the lb4 and the lb6 maps",
    services: dualServices(
      (n) => `172.30.0.${n}`,
      (n) => `fd00:172:30::${n}`,
    ),
    slices: dualSlices(),
    families: ["IPv4", "IPv6"],
  },
];

/** The case's maps after one full sync per family, as the fake holds them. */
function renderCase(c: GoldenCase): string {
  const fake = new FakeBPFMaps();
  const sections: string[] = [];
  for (const family of c.families ?? ["IPv4"]) {
    const result = syncInto(fake, ebpfOptions(family), buildMaps(family, c.services, c.slices));
    const text = contentsText(fake.contents(family));
    // The renderer's own idea of the maps is what the fake holds.
    assert.equal(contentsText(result.state.contents), text);
    sections.push(text);
  }
  return `${sections.join("\n")}\n`;
}

describe("eBPF golden map contents", () => {
  for (const c of cases) {
    test(`${c.name}: ${c.about}`, () => {
      const file = join(GOLDEN_DIR, `${c.name}.txt`);
      const header = `# ${c.about}.\n# Regenerate: ${REGENERATE}\n`;
      const actual = header + renderCase(c);
      if (UPDATE) writeFileSync(file, actual);
      const expected = readFileSync(file, "utf8");
      if (actual !== expected) {
        assert.fail(`${c.name} differs from ${file}:\n${lineDiff(expected.split("\n"), actual.split("\n"))}`);
      }
    });
  }
});
