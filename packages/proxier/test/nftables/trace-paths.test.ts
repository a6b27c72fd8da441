// The tracer's paths: every way a packet can go, with the rules it matched and how likely it is.
// Address plan: ../../src/testing/fixtures.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { FakeNFTables } from "../../src/nftables/fake.js";
import { renderNFTables } from "../../src/nftables/render.js";
import { tracePacket } from "../../src/nftables/tracer.js";
import {
  buildMaps,
  makeService,
  makeSlice,
  NODE_IP,
  nftOptions,
  POD_CLIENT,
} from "../../src/testing/fixtures.js";

const p80 = [{ name: "p80", port: 80 }];

function table(services: Service[], slices: EndpointSlice[]): FakeNFTables {
  const nft = new FakeNFTables("ip", "kube-proxy");
  nft.run(renderNFTables(nftOptions(), { ...buildMaps("IPv4", services, slices), now: 0 }).transaction);
  return nft;
}

const svc1 = (extra: Service["spec"] = {}) =>
  makeService("ns1", "svc1", {
    clusterIP: "172.30.0.41",
    ports: [{ name: "p80", port: 80, protocol: "TCP" }],
    ...extra,
  });
const endpoints = (...ips: string[]) => [
  makeSlice(
    "ns1",
    "svc1",
    "a",
    ips.map((ip) => ({ addresses: [ip] })),
    p80,
  ),
];
const toClusterIP = { sourceIP: POD_CLIENT, destIP: "172.30.0.41", destPort: 80 };

describe("nftables trace paths", () => {
  test("three endpoints: one path each, a third each, through the service-ips map", () => {
    const nft = table([svc1()], endpoints("10.180.0.1", "10.180.1.1", "10.180.2.1"));
    const r = tracePacket(nft, [NODE_IP], toClusterIP);
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.paths.map((p) => p.output),
      ["10.180.0.1:80", "10.180.1.1:80", "10.180.2.1:80"],
    );
    for (const p of r.paths)
      assert.ok(Math.abs(p.probability - 1 / 3) < 1e-9, `${p.output}: ${p.probability}`);
    const steps = r.paths[1]?.steps ?? [];
    const dispatch = steps.find((s) => s.note?.startsWith("@service-ips:"));
    assert.match(
      dispatch?.note ?? "",
      /^@service-ips: 172\.30\.0\.41 \. tcp \. 80 : goto service-\S+-ns1\/svc1\/tcp\/p80$/,
    );
    assert.equal(dispatch?.chain, "services");
    const choice = steps.find((s) => s.chain.startsWith("service-"));
    assert.equal(choice?.note, "numgen 1 of 3: 10.180.1.1 . 80");
    assert.ok(steps.every((s) => s.table === "ip kube-proxy"));
  });

  test("one endpoint: one certain path", () => {
    const r = tracePacket(table([svc1()], endpoints("10.180.0.1")), [NODE_IP], toClusterIP);
    assert.deepEqual(
      r.paths.map((p) => [p.output, p.probability]),
      [["10.180.0.1:80", 1]],
    );
  });

  test("no endpoints: the reject comes from the no-endpoint-services map, noted with the Service", () => {
    const r = tracePacket(table([svc1()], []), [NODE_IP], toClusterIP);
    assert.deepEqual(
      r.paths.map((p) => [p.output, p.probability]),
      [["REJECT", 1]],
    );
    const notes = (r.paths[0]?.steps ?? []).map((s) => s.note).filter(Boolean);
    assert.ok(
      notes.includes("@no-endpoint-services: 172.30.0.41 . tcp . 80 (ns1/svc1:p80) : goto reject-chain"),
      notes.join("\n"),
    );
  });

  test("a miss in a map is noted too, with the packet as it was then", () => {
    const r = tracePacket(table([svc1()], endpoints("10.180.0.1")), [NODE_IP], toClusterIP);
    const notes = (r.paths[0]?.steps ?? []).map((s) => s.note);
    // firewall-check runs before DNAT, service-endpoints-check (filter forward) after it
    assert.ok(notes.includes("@firewall-ips: no element 172.30.0.41 . tcp . 80"), notes.join("\n"));
    assert.ok(notes.includes("@no-endpoint-services: no element 10.180.0.1 . tcp . 80"), notes.join("\n"));
  });

  test("session affinity: the endpoint chains are chosen by numgen, half each", () => {
    const affinity: Service["spec"] = {
      sessionAffinity: "ClientIP",
      sessionAffinityConfig: { clientIP: { timeoutSeconds: 10800 } },
    };
    const r = tracePacket(
      table([svc1(affinity)], endpoints("10.180.0.1", "10.180.2.1")),
      [NODE_IP],
      toClusterIP,
    );
    assert.deepEqual(r.errors, []);
    assert.deepEqual(
      r.paths.map((p) => [p.output, p.probability]),
      [
        ["10.180.0.1:80", 0.5],
        ["10.180.2.1:80", 0.5],
      ],
    );
    assert.ok(r.paths[1]?.steps.some((s) => /^numgen 1 of 2: goto endpoint-/.test(s.note ?? "")));
  });

  test("rule comments are kept apart from the rule", () => {
    const r = tracePacket(table([svc1()], endpoints("10.180.0.1")), [NODE_IP], {
      ...toClusterIP,
      sourceIP: "203.0.113.2",
    });
    const masq = r.paths[0]?.steps.find(
      (s) => s.comment === "masquerade clusterIP traffic from outside cluster",
    );
    assert.equal(masq?.chain, "services");
    assert.doesNotMatch(masq?.rule ?? "", /comment/);
    assert.equal(r.paths[0]?.masq, true);
  });
});
