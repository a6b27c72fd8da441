// The eBPF tracer against the nftables one: for the same cluster, a connection must reach the same endpoints
// with the same probabilities (and, from outside, be masqueraded alike), whichever mode proxies it. Connections
// started on this node (pods, the host) go through the socket-level programs (the external scope, or the internal
// one where the external slot 0 says TWO_SCOPES), the rest through the tc programs (external scope). Address plan: ../../src/testing/fixtures.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { MapContents } from "../../src/ebpf/contents.js";
import { FakeBPFMaps } from "../../src/ebpf/fake.js";
import { SCOPE_EXTERNAL, serviceFlags } from "../../src/ebpf/layout.js";
import { type EBPFTracePacket, traceEBPF } from "../../src/ebpf/tracer.js";
import type { TraceResult } from "../../src/model/trace.js";
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
import { goldenServices, goldenSlices } from "../golden-cluster.js";
import { ebpfOptions, syncInto } from "./helpers.js";

interface Both {
  readonly nft: FakeNFTables;
  readonly maps: MapContents;
}

function bothModes(services: Service[], slices: EndpointSlice[]): Both {
  const input = buildMaps("IPv4", services, slices);
  const nft = new FakeNFTables("ip", "kube-proxy");
  nft.run(renderNFTables(nftOptions(), { ...input, now: 0 }).transaction);
  const fake = new FakeBPFMaps();
  syncInto(fake, ebpfOptions(), input);
  return { nft, maps: fake.contents("IPv4") };
}

/** Where paths end and how likely each end is: "10.180.0.1:80 0.5, 10.180.1.1:80 0.5". */
function distribution(r: TraceResult): string {
  const byOutput = new Map<string, number>();
  for (const p of r.paths) byOutput.set(p.output, (byOutput.get(p.output) ?? 0) + p.probability);
  return [...byOutput]
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([out, p]) => `${out} ${p.toFixed(4)}`)
    .join(", ");
}

function assertAgree(both: Both, packet: EBPFTracePacket): void {
  const what = `${packet.origin} ${packet.sourceIP} -> ${packet.destIP}:${packet.destPort}/${packet.protocol ?? "tcp"}`;
  const nft = tracePacket(both.nft, [NODE_IP], packet);
  const ebpf = traceEBPF(both.maps, packet);
  assert.deepEqual(nft.errors, [], what);
  assert.deepEqual(ebpf.errors, [], what);
  assert.equal(distribution(ebpf), distribution(nft), what);
  // From outside both modes NAT the packet; whether the source is masqueraded must agree.
  if (packet.origin === "external") assert.equal(ebpf.masq, nft.masq, `${what}: masquerade`);
}

const p80 = [{ name: "p80", port: 80 }];
const here = { nodeName: NODE_NAME };
const there = { nodeName: "node2" };
const fromPod = { sourceIP: POD_CLIENT, origin: "node" } as const;
const fromHost = { sourceIP: NODE_IP, origin: "node" } as const;
const fromOutside = { sourceIP: EXTERNAL_CLIENT, origin: "external" } as const;

describe("eBPF tracer agrees with the nftables tracer", () => {
  test("every frontend of the representative cluster, from a pod, the host and outside", () => {
    const both = bothModes(
      goldenServices((n) => `172.30.0.${n}`),
      goldenSlices(),
    );
    let compared = 0;
    for (const e of both.maps.services.values()) {
      const k = e.key;
      // Every frontend has an external slot 0: the tc programs read it, and so do the socket programs (which
      // go on to the internal scope when it says TWO_SCOPES).
      if (k.backendSlot !== 0 || k.scope !== SCOPE_EXTERNAL) continue;
      const dest = {
        destIP: k.address,
        destPort: k.dport,
        protocol: k.proto === 17 ? "udp" : "tcp",
      } as const;
      assertAgree(both, { ...fromOutside, ...dest });
      compared++;
      assertAgree(both, { ...fromPod, ...dest });
      assertAgree(both, { ...fromHost, ...dest });
      compared += 2;
    }
    assert.equal(compared, 48);
  });

  test("externalTrafficPolicy Local: outside gets local endpoints and keeps its source; pods and the host get all", () => {
    const svc = (name: string, ip: string, vip: string, nodePort: number) =>
      makeService(
        "ns1",
        name,
        {
          type: "LoadBalancer",
          externalTrafficPolicy: "Local",
          clusterIP: ip,
          ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort }],
        },
        { loadBalancer: { ingress: [{ ip: vip }] } },
      );
    const both = bothModes(
      [svc("local", "172.30.0.41", "1.2.3.4", 3001), svc("remote", "172.30.0.42", "5.6.7.8", 3002)],
      [
        makeSlice(
          "ns1",
          "local",
          "a",
          [
            { addresses: ["10.180.0.1"], ...here },
            { addresses: ["10.180.2.1"], ...there },
          ],
          p80,
        ),
        makeSlice("ns1", "remote", "a", [{ addresses: ["10.180.2.2"], ...there }], p80),
      ],
    );
    for (const [destIP, destPort] of [
      ["1.2.3.4", 80],
      [NODE_IP, 3001],
      ["5.6.7.8", 80],
      [NODE_IP, 3002],
      ["172.30.0.42", 80],
    ] as const) {
      for (const from of [fromPod, fromHost, fromOutside]) assertAgree(both, { ...from, destIP, destPort });
    }
    assert.equal(traceEBPF(both.maps, { ...fromOutside, destIP: "5.6.7.8", destPort: 80 }).output, "DROP");
    assert.equal(traceEBPF(both.maps, { ...fromOutside, destIP: "1.2.3.4", destPort: 80 }).masq, false);
  });

  test("internal traffic policy Local, terminating fallback, affinity, topology hints, a UDP port", () => {
    const both = bothModes(
      [
        makeService("ns1", "itp", {
          clusterIP: "172.30.0.41",
          internalTrafficPolicy: "Local",
          ports: [{ name: "p80", port: 80, protocol: "TCP" }],
        }),
        makeService("ns1", "itp-none", {
          clusterIP: "172.30.0.42",
          internalTrafficPolicy: "Local",
          ports: [{ name: "p80", port: 80, protocol: "TCP" }],
        }),
        makeService("ns1", "term", {
          clusterIP: "172.30.0.43",
          ports: [{ name: "p80", port: 80, protocol: "TCP" }],
        }),
        makeService("ns1", "sticky", {
          clusterIP: "172.30.0.44",
          sessionAffinity: "ClientIP",
          sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
          ports: [{ name: "p80", port: 80, protocol: "TCP" }],
        }),
        makeService("ns1", "zoned", {
          clusterIP: "172.30.0.45",
          ports: [{ name: "dns", port: 53, protocol: "UDP" }],
        }),
      ],
      [
        makeSlice(
          "ns1",
          "itp",
          "a",
          [
            { addresses: ["10.180.0.1"], ...here },
            { addresses: ["10.180.2.1"], ...there },
          ],
          p80,
        ),
        makeSlice("ns1", "itp-none", "a", [{ addresses: ["10.180.2.2"], ...there }], p80),
        makeSlice(
          "ns1",
          "term",
          "a",
          [
            { addresses: ["10.180.0.3"], conditions: { ready: false, serving: true, terminating: true } },
            { addresses: ["10.180.0.4"], conditions: { ready: false, serving: false, terminating: true } },
          ],
          p80,
        ),
        makeSlice(
          "ns1",
          "sticky",
          "a",
          [{ addresses: ["10.180.0.5"], ...here }, { addresses: ["10.180.2.5"] }],
          p80,
        ),
        makeSlice(
          "ns1",
          "zoned",
          "a",
          [
            { addresses: ["10.180.0.6"], hints: { forZones: [{ name: "zone-a" }] } },
            { addresses: ["10.180.1.6"], hints: { forZones: [{ name: "zone-a" }] } },
            { addresses: ["10.180.2.6"], hints: { forZones: [{ name: "zone-b" }] } },
          ],
          [{ name: "dns", port: 53, protocol: "UDP" }],
        ),
      ],
    );
    for (const n of [41, 42, 43, 44]) {
      for (const from of [fromPod, fromHost, fromOutside])
        assertAgree(both, { ...from, destIP: `172.30.0.${n}`, destPort: 80 });
    }
    for (const from of [fromPod, fromOutside])
      assertAgree(both, { ...from, destIP: "172.30.0.45", destPort: 53, protocol: "udp" });
    assert.equal(traceEBPF(both.maps, { ...fromPod, destIP: "172.30.0.42", destPort: 80 }).output, "DROP");
    assert.equal(
      distribution(
        traceEBPF(both.maps, { ...fromPod, destIP: "172.30.0.45", destPort: 53, protocol: "udp" }),
      ),
      "10.180.0.6:53 0.5000, 10.180.1.6:53 0.5000",
    );
  });
});

/**
 * loadBalancerSourceRanges: "lb" admits 203.0.113.0/25 only; "lb-node" also the node's network, so its VIP too
 * (a VIP the node holds is the source of the node's own requests to it); "lb-empty" has no endpoint at all.
 */
function rangedServices(): Service[] {
  const lb = (name: string, n: number, vip: string, ranges: string[]) =>
    makeService(
      "ns1",
      name,
      {
        type: "LoadBalancer",
        clusterIP: `172.30.0.${n}`,
        loadBalancerSourceRanges: ranges,
        ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3000 + n }],
      },
      { loadBalancer: { ingress: [{ ip: vip }] } },
    );
  return [
    lb("lb", 41, "1.2.3.4", ["203.0.113.0/25"]),
    lb("lb-node", 42, "5.6.7.8", ["203.0.113.0/25", "192.168.0.0/24"]),
    lb("lb-empty", 43, "9.9.9.9", ["203.0.113.0/25"]),
  ];
}

function rangedSlices(): EndpointSlice[] {
  return [
    makeSlice("ns1", "lb", "a", [{ addresses: ["10.180.1.1"], ...there }], p80),
    makeSlice("ns1", "lb-node", "a", [{ addresses: ["10.180.0.2"], ...here }], p80),
  ];
}

describe("eBPF tracer agrees with the nftables tracer on loadBalancerSourceRanges", () => {
  const both = bothModes(rangedServices(), rangedSlices());
  const blocked = { sourceIP: EXTERNAL_CLIENT_BLOCKED, origin: "external" } as const;
  const fromVIP = { sourceIP: "5.6.7.8", origin: "node" } as const;
  const cases = [
    ["1.2.3.4", [fromOutside, blocked, fromHost, fromPod]],
    ["5.6.7.8", [fromOutside, blocked, fromHost, fromPod, fromVIP]],
    ["9.9.9.9", [fromOutside, blocked, fromHost]],
  ] as const;

  test("inside and outside the ranges, from outside the node and from it, endpoints or none", () => {
    const outputs: string[] = [];
    for (const [destIP, sources] of cases) {
      for (const from of sources) {
        const packet = { ...from, destIP, destPort: 80 };
        assertAgree(both, packet);
        outputs.push(`${from.sourceIP} -> ${destIP}: ${traceEBPF(both.maps, packet).output}`);
      }
    }
    assert.deepEqual(outputs, [
      "203.0.113.2 -> 1.2.3.4: 10.180.1.1:80",
      "203.0.113.130 -> 1.2.3.4: DROP",
      "192.168.0.2 -> 1.2.3.4: DROP",
      "10.180.0.99 -> 1.2.3.4: DROP",
      "203.0.113.2 -> 5.6.7.8: 10.180.0.2:80",
      "203.0.113.130 -> 5.6.7.8: DROP",
      "192.168.0.2 -> 5.6.7.8: 10.180.0.2:80",
      "10.180.0.99 -> 5.6.7.8: DROP",
      "5.6.7.8 -> 5.6.7.8: 10.180.0.2:80",
      "203.0.113.2 -> 9.9.9.9: REJECT",
      "203.0.113.130 -> 9.9.9.9: DROP",
      "192.168.0.2 -> 9.9.9.9: DROP",
    ]);
  });

  test("NodePorts, ClusterIPs and other families' ranges are not restricted", () => {
    for (const from of [fromOutside, blocked, fromHost]) {
      assertAgree(both, { ...from, destIP: NODE_IP, destPort: 3041 });
      assertAgree(both, { ...from, destIP: "172.30.0.41", destPort: 80 });
    }
    const v6Only = bothModes(
      [
        makeService(
          "ns1",
          "lb",
          {
            type: "LoadBalancer",
            clusterIP: "172.30.0.41",
            loadBalancerSourceRanges: ["fd00:203:0:113::/64"],
            ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3041 }],
          },
          { loadBalancer: { ingress: [{ ip: "1.2.3.4" }] } },
        ),
      ],
      rangedSlices(),
    );
    assert.equal(v6Only.maps.sourceRanges?.size, 0);
    assertAgree(v6Only, { ...blocked, destIP: "1.2.3.4", destPort: 80 });
    assert.equal(
      traceEBPF(v6Only.maps, { ...blocked, destIP: "1.2.3.4", destPort: 80 }).output,
      "10.180.1.1:80",
    );
  });
});

describe("eBPF tracer", () => {
  const both = bothModes(
    [
      makeService("ns1", "svc1", {
        clusterIP: "172.30.0.41",
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
      makeService("ns1", "empty", {
        clusterIP: "172.30.0.42",
        ports: [{ name: "p80", port: 80, protocol: "TCP" }],
      }),
    ],
    [
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
  );

  test("names the entries each path went through", () => {
    const r = traceEBPF(both.maps, { ...fromPod, destIP: "172.30.0.41", destPort: 80 });
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.paths[1]?.steps.map((s) => `${s.table} ${s.chain} ${s.rule}: ${s.note}`),
      [
        "lb4_services connect4 172.30.0.41:80/TCP external slot 0: count 2, revNat 2, flags CLUSTER_IP",
        "lb4_services connect4 172.30.0.41:80/TCP external slot 2: slot 2 of 2: backend 2",
        "lb4_backends connect4 id 2: 10.180.1.1:80/TCP",
        "lb4_reverse_nat connect4 index 2: replies from 172.30.0.41:80",
      ],
    );
    assert.deepEqual(
      r.paths.map((p) => [p.output, p.probability, p.masq]),
      [
        ["10.180.0.1:80", 0.5, false],
        ["10.180.1.1:80", 0.5, false],
      ],
    );
    assert.equal(
      traceEBPF(both.maps, { ...fromOutside, destIP: "172.30.0.41", destPort: 80 }).paths[0]?.steps[0]?.chain,
      "tc ingress",
    );
    assert.equal(
      traceEBPF(both.maps, { ...fromPod, destIP: "172.30.0.41", destPort: 80, protocol: "udp" }).paths[0]
        ?.steps[0]?.chain,
      "sendmsg4",
    );
  });

  test("REJECT without endpoints; ACCEPT, untranslated, for what is no frontend", () => {
    assert.equal(traceEBPF(both.maps, { ...fromPod, destIP: "172.30.0.42", destPort: 80 }).output, "REJECT");
    const none = traceEBPF(both.maps, { ...fromPod, destIP: "10.180.0.1", destPort: 80 });
    assert.equal(none.output, "ACCEPT");
    assert.equal(none.paths[0]?.steps[0]?.note, "no entry: not a service, left as it is");
  });

  test("where the modes differ: ports a ClusterIP does not serve", () => {
    // nftables rejects traffic to a ClusterIP's other ports; the socket programs find no frontend and leave it.
    const otherPort = { ...fromPod, destIP: "172.30.0.41", destPort: 443 };
    assert.equal(tracePacket(both.nft, [NODE_IP], otherPort).output, "REJECT");
    assert.equal(traceEBPF(both.maps, otherPort).output, "ACCEPT");
  });

  test("a source range lookup is a step of the path; SOURCE_RANGES without the ranges read is an error", () => {
    const ranged = bothModes(rangedServices(), rangedSlices());
    const r = traceEBPF(ranged.maps, { ...fromOutside, destIP: "1.2.3.4", destPort: 80 });
    const step = r.paths[0]?.steps[1];
    assert.equal(
      `${step?.table} ${step?.chain} ${step?.rule}: ${step?.note}`,
      "lb4_src_range tc ingress revNat 8 203.0.113.2: admitted by 203.0.113.0/25",
    );
    const blocked = traceEBPF(ranged.maps, { ...fromHost, destIP: "1.2.3.4", destPort: 80 });
    assert.equal(blocked.output, "DROP");
    assert.equal(blocked.paths[0]?.steps[1]?.note, "outside 203.0.113.0/25");
    const { sourceRanges: _, ...unread } = ranged.maps;
    assert.deepEqual(traceEBPF(unread, { ...fromOutside, destIP: "1.2.3.4", destPort: 80 }).errors, [
      "1.2.3.4:80/TCP external slot 0: SOURCE_RANGES but the source ranges were not read",
    ]);
  });

  test("a map that breaks the rules is reported, not trusted", () => {
    const services = new Map(both.maps.services);
    services.delete("172.30.0.41:80/TCP external slot 2");
    const broken = {
      ...both.maps,
      services,
      backends: new Map([...both.maps.backends].filter(([id]) => id !== 1)),
    };
    const r = traceEBPF(broken, { ...fromPod, destIP: "172.30.0.41", destPort: 80 });
    assert.deepEqual(r.errors, [
      "172.30.0.41:80/TCP external slot 1 names missing backend 1",
      "172.30.0.41:80/TCP external slot 0 counts 2 but 172.30.0.41:80/TCP external slot 2 is missing",
    ]);
  });

  test("TWO_SCOPES without the internal scope: reported, and the socket program finds no service", () => {
    const name = "172.30.0.41:80/TCP external slot 0";
    const head = both.maps.services.get(name);
    assert.ok(head);
    const flagged = { ...head, value: { ...head.value, flags: head.value.flags | serviceFlags.TWO_SCOPES } };
    const services = new Map(both.maps.services).set(name, flagged);
    const r = traceEBPF({ ...both.maps, services }, { ...fromPod, destIP: "172.30.0.41", destPort: 80 });
    assert.deepEqual(r.errors, [`${name} says TWO_SCOPES but 172.30.0.41:80/TCP internal slot 0 is missing`]);
    assert.equal(r.output, "ACCEPT");
    // The tc program reads the external scope only: the flag is nothing to it.
    const outside = traceEBPF(
      { ...both.maps, services },
      { ...fromOutside, destIP: "172.30.0.41", destPort: 80 },
    );
    assert.deepEqual(outside.errors, []);
    assert.equal(outside.paths.length, 2);
  });
});
