// The service table in `cilium-dbg bpf lb list`'s shape, from what the fake holds.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeBPFMaps } from "../../src/ebpf/fake.js";
import { formatLBList } from "../../src/ebpf/lb-list.js";
import { buildMaps, makeService, makeSlice } from "../../src/testing/fixtures.js";
import { dedent } from "../nft-helpers.js";
import { ebpfOptions, syncInto } from "./helpers.js";

function dualStackMaps(): FakeBPFMaps {
  const fake = new FakeBPFMaps();
  const services = [
    makeService("ns1", "dns", {
      clusterIP: "172.30.0.10",
      clusterIPs: ["172.30.0.10", "fd00:172:30::10"],
      ipFamilies: ["IPv4", "IPv6"],
      ports: [{ name: "dns", port: 53, protocol: "UDP" }],
    }),
    makeService("ns1", "web", {
      type: "NodePort",
      clusterIP: "172.30.0.41",
      externalTrafficPolicy: "Local",
      sessionAffinity: "ClientIP",
      ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: 30080 }],
    }),
  ];
  const dns = [{ name: "dns", port: 53, protocol: "UDP" as const }];
  const slices = [
    makeSlice("ns1", "dns", "a", [{ addresses: ["10.180.0.2"] }, { addresses: ["10.180.1.2"] }], dns),
    makeSlice("ns1", "dns", "b", [{ addresses: ["fd00:10:180::2"] }], dns, "IPv6"),
    makeSlice(
      "ns1",
      "web",
      "a",
      [{ addresses: ["10.180.1.3"], nodeName: "node2" }],
      [{ name: "p80", port: 80 }],
    ),
  ];
  for (const family of ["IPv4", "IPv6"] as const)
    syncInto(fake, ebpfOptions(family), buildMaps(family, services, slices));
  return fake;
}

describe("formatLBList", () => {
  const fake = dualStackMaps();
  const all = [fake.contents("IPv6"), fake.contents("IPv4")];

  test("frontends and their slots, IPv4 first; /i marks the internal scope of a frontend that has two", () => {
    assert.equal(
      formatLBList(all),
      dedent(`
        SERVICE ADDRESS            BACKEND ADDRESS (REVNAT_ID) (SLOT)
        172.30.0.10:53/UDP         0.0.0.0:0 (1) (0) [ClusterIP]
                                   10.180.0.2:53/UDP (1) (1)
                                   10.180.1.2:53/UDP (1) (2)
        172.30.0.41:80/TCP         0.0.0.0:0 (2) (0) [ClusterIP, sessionAffinity]
                                   10.180.1.3:80/TCP (2) (1)
        192.168.0.2:30080/TCP      0.0.0.0:0 (3) (0) [NodePort, Local, sessionAffinity, drop]
        192.168.0.2:30080/TCP/i    0.0.0.0:0 (3) (0) [NodePort, sessionAffinity]
                                   10.180.1.3:80/TCP (3) (1)
        [fd00:172:30::10]:53/UDP   [::]:0 (1) (0) [ClusterIP]
                                   [fd00:10:180::2]:53/UDP (1) (1)`).trimEnd(),
    );
  });

  test("the backends and reverse NAT views", () => {
    assert.equal(
      formatLBList(all, "backends"),
      [
        "ID   BACKEND ADDRESS",
        "1    10.180.0.2:53/UDP",
        "2    10.180.1.2:53/UDP",
        "3    10.180.1.3:80/TCP",
        "1    [fd00:10:180::2]:53/UDP",
      ].join("\n"),
    );
    assert.equal(
      formatLBList([fake.contents("IPv4")], "revnat"),
      ["ID   REVERSE NAT", "1    172.30.0.10:53", "2    172.30.0.41:80", "3    192.168.0.2:30080"].join("\n"),
    );
  });

  test("a slot naming a backend that is gone says so, as Cilium does", () => {
    const v4 = fake.contents("IPv4");
    const broken = { ...v4, backends: new Map([...v4.backends].filter(([id]) => id !== 3)) };
    assert.match(
      formatLBList([broken]),
      /172\.30\.0\.41:80\/TCP {8}0\.0\.0\.0:0 \(2\) \(0\) \[ClusterIP, sessionAffinity\]\n {26}backend 3 not found/,
    );
  });
});
