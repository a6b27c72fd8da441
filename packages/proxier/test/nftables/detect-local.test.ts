// Each --detect-local-mode as the nftables renderer writes it: the two rules that need a
// pod-traffic match, and packets traced through them. ../upstream-diff.test.ts checks the
// interface modes against the real kube-proxy.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import type { LocalDetector } from "../../src/model/local-detector.js";
import { FakeNFTables } from "../../src/nftables/fake.js";
import { renderNFTables } from "../../src/nftables/render.js";
import { tracePacket } from "../../src/nftables/tracer.js";
import {
  buildMaps,
  EXTERNAL_CLIENT,
  makeService,
  makeSlice,
  NODE_IP,
  NODE_IPV6,
  NODE_NAME,
  nftOptions,
} from "../../src/testing/fixtures.js";

const p80 = [{ name: "p80", port: 80 }];
const CHAIN = "external-ULMVA6XW-ns1/svc1/tcp/p80";
const SERVICE = "service-ULMVA6XW-ns1/svc1/tcp/p80";

/** A NodePort with ETP=Local and endpoints here and on node2, rendered into a fake table. */
function render(family: IPFamily, localDetector: LocalDetector): FakeNFTables {
  const v4 = family === "IPv4";
  const maps = buildMaps(
    family,
    [
      makeService("ns1", "svc1", {
        type: "NodePort",
        externalTrafficPolicy: "Local",
        clusterIP: v4 ? "172.30.0.41" : "fd00:172:30::41",
        ipFamilies: [family],
        ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 3001 }],
      }),
    ],
    [
      makeSlice(
        "ns1",
        "svc1",
        "a",
        [
          { addresses: [v4 ? "10.180.0.1" : "fd00:10:180::1"], nodeName: NODE_NAME },
          { addresses: [v4 ? "10.180.2.1" : "fd00:10:180::2:1"], nodeName: "node2" },
        ],
        p80,
        family,
      ),
    ],
  );
  const nft = new FakeNFTables(v4 ? "ip" : "ip6", "kube-proxy");
  nft.run(renderNFTables(nftOptions(family, { localDetector }), { ...maps, now: 0 }).transaction);
  return nft;
}

/** The rules that carry the detector's match, in the dump's (chain-sorted) order. */
function detectorRules(nft: FakeNFTables): string[] {
  return nft
    .dump()
    .split("\n")
    .filter((l) => l.includes("from outside cluster") || l.includes("short-circuit pod traffic"));
}

const cases: { detector: LocalDetector; family?: IPFamily; notLocal: string; local: string }[] = [
  {
    detector: { mode: "ClusterCIDR", cidr: "10.0.0.0/8" },
    notLocal: "ip saddr != 10.0.0.0/8",
    local: "ip saddr 10.0.0.0/8",
  },
  {
    detector: { mode: "NodeCIDR", cidr: "10.180.0.0/24" },
    notLocal: "ip saddr != 10.180.0.0/24",
    local: "ip saddr 10.180.0.0/24",
  },
  {
    detector: { mode: "ClusterCIDR", cidr: "fd00:10::/32" },
    family: "IPv6",
    notLocal: "ip6 saddr != fd00:10::/32",
    local: "ip6 saddr fd00:10::/32",
  },
  {
    detector: { mode: "BridgeInterface", interfaceName: "cbr0" },
    notLocal: "iifname != cbr0",
    local: "iifname cbr0",
  },
  {
    detector: { mode: "BridgeInterface", interfaceName: "cbr0" },
    family: "IPv6",
    notLocal: "iifname != cbr0",
    local: "iifname cbr0",
  },
  {
    detector: { mode: "InterfaceNamePrefix", prefix: "veth" },
    notLocal: "iifname != veth*",
    local: "iifname veth*",
  },
];

describe("nftables detect-local rules", () => {
  for (const c of cases) {
    const family = c.family ?? "IPv4";
    test(`${c.detector.mode} (${family})`, () => {
      const ip = family === "IPv4" ? "ip" : "ip6";
      assert.deepEqual(detectorRules(render(family, c.detector)), [
        `add rule ${ip} kube-proxy ${CHAIN} ${c.local} goto ${SERVICE} comment "short-circuit pod traffic"`,
        `add rule ${ip} kube-proxy services ${ip} daddr @cluster-ips ${c.notLocal} mark set mark or 0x00004000 comment "masquerade clusterIP traffic from outside cluster"`,
      ]);
    });
  }

  test("no detector: neither rule is written", () => {
    assert.deepEqual(detectorRules(render("IPv4", { mode: "none" })), []);
    assert.deepEqual(detectorRules(render("IPv6", { mode: "none" })), []);
  });
});

describe("nftables detect-local by interface, traced", () => {
  const both = "10.180.0.1:80, 10.180.2.1:80";
  const flows = [
    { detector: { mode: "BridgeInterface", interfaceName: "cbr0" }, from: "cbr0", output: both },
    { detector: { mode: "BridgeInterface", interfaceName: "cbr0" }, from: "cbr1", output: "10.180.0.1:80" },
    { detector: { mode: "InterfaceNamePrefix", prefix: "veth" }, from: "veth1234", output: both },
    { detector: { mode: "InterfaceNamePrefix", prefix: "veth" }, from: "eth0", output: "10.180.0.1:80" },
  ] as const;
  for (const f of flows) {
    test(`${f.detector.mode}: NodePort from ${f.from} reaches ${f.output}`, () => {
      // Same source address every time: only the input interface decides.
      const r = tracePacket(render("IPv4", f.detector), [NODE_IP], {
        sourceIP: "10.180.0.5",
        destIP: NODE_IP,
        destPort: 3001,
        inInterface: f.from,
      });
      assert.deepEqual(r.errors, []);
      assert.equal(r.output, f.output);
    });
  }

  test("BridgeInterface: ClusterIP from outside the bridge is masqueraded, from the bridge is not", () => {
    const nft = render("IPv4", { mode: "BridgeInterface", interfaceName: "cbr0" });
    const trace = (inInterface: string) =>
      tracePacket(nft, [NODE_IP], {
        sourceIP: EXTERNAL_CLIENT,
        destIP: "172.30.0.41",
        destPort: 80,
        inInterface,
      });
    assert.equal(trace("eth0").masq, true);
    assert.equal(trace("cbr0").masq, false);
  });

  test("IPv6 table traced with BridgeInterface", () => {
    const r = tracePacket(render("IPv6", { mode: "BridgeInterface", interfaceName: "cbr0" }), [NODE_IPV6], {
      sourceIP: "fd00:10:180::5",
      destIP: NODE_IPV6,
      destPort: 3001,
      inInterface: "cbr0",
    });
    assert.deepEqual(r.errors, []);
    assert.equal(r.output, "[fd00:10:180::1]:80, [fd00:10:180::2:1]:80");
  });
});
