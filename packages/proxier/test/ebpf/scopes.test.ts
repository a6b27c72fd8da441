// One scope or two: the external scope is always written; the internal one only when the node's own sockets
// must meet other backends or other slot 0 fields, and then the external slot 0 carries TWO_SCOPES. Every sync
// is written into the fake, which refuses a flag without the internal scope it names at any moment.
// Address plan: ../../src/testing/fixtures.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Service } from "kubernetes-types/core/v1.js";
import { decodeStruct } from "../../src/ebpf/codec.js";
import { serviceEntryName } from "../../src/ebpf/contents.js";
import { resolvedText } from "../../src/ebpf/contents-text.js";
import { FakeBPFMaps } from "../../src/ebpf/fake.js";
import { maps, serviceFlags } from "../../src/ebpf/layout.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import { renderEBPF } from "../../src/ebpf/render.js";
import { traceEBPF } from "../../src/ebpf/tracer.js";
import { buildMaps, makeService, makeSlice, NODE_IP, NODE_NAME } from "../../src/testing/fixtures.js";
import { ebpfOptions, syncInto } from "./helpers.js";

const opts = ebpfOptions();
const CLUSTER_IP = "172.30.0.41";
const NODE_PORT = 30001;

type Policy = "Cluster" | "Local";

/** A NodePort Service with one endpoint on this node and one elsewhere. */
function nodePort(externalTrafficPolicy: Policy, internalTrafficPolicy: Policy = "Cluster") {
  const spec: Service["spec"] = {
    type: "NodePort",
    clusterIP: CLUSTER_IP,
    externalTrafficPolicy,
    internalTrafficPolicy,
    ports: [{ name: "p80", port: 80, nodePort: NODE_PORT, protocol: "TCP" }],
  };
  const slice = makeSlice(
    "ns1",
    "web",
    "x",
    [
      { addresses: ["10.180.0.1"], nodeName: NODE_NAME },
      { addresses: ["10.180.1.1"], nodeName: "node2" },
    ],
    [{ name: "p80", port: 80 }],
  );
  return buildMaps("IPv4", [makeService("ns1", "web", spec)], [slice]);
}

/** The services map's entries as "address:port/PROTO scope slot N", sorted. */
function entryNames(fake: FakeBPFMaps): string[] {
  return [...fake.contents("IPv4").services.keys()].sort();
}

const nodePortEntries = (scope: string, slots: number) =>
  Array.from({ length: slots + 1 }, (_, i) => `${NODE_IP}:${NODE_PORT}/TCP ${scope} slot ${i}`);
const clusterIPEntries = Array.from({ length: 3 }, (_, i) => `${CLUSTER_IP}:80/TCP external slot ${i}`);

function headFlags(fake: FakeBPFMaps, name: string): number {
  const head = fake.contents("IPv4").services.get(name);
  assert.ok(head, `${name} is there`);
  return head.value.flags;
}

function serviceSteps(steps: readonly MapWriteStep[]): string[] {
  return steps
    .filter((s) => s.map === "services")
    .map((s) => {
      const keys = s.op === "update" ? s.entries.map(([k]) => k) : s.keys;
      const names = keys.map((k) => serviceEntryName(decodeStruct(maps.services.key, "IPv4", k)));
      return `${s.op}: ${names.join(", ")}`;
    });
}

describe("eBPF service scopes", () => {
  test("Cluster/Cluster: every frontend has the external scope only, without TWO_SCOPES", () => {
    const fake = new FakeBPFMaps();
    const r = syncInto(fake, opts, nodePort("Cluster"));
    assert.deepEqual(entryNames(fake), [...clusterIPEntries, ...nodePortEntries("external", 2)].sort());
    assert.equal(headFlags(fake, `${NODE_IP}:${NODE_PORT}/TCP external slot 0`) & serviceFlags.TWO_SCOPES, 0);
    assert.equal(r.sizes.services, 6);
  });

  test("externalTrafficPolicy Local: the NodePort gets two scopes and the flag, the ClusterIP one", () => {
    const fake = new FakeBPFMaps();
    syncInto(fake, opts, nodePort("Local"));
    assert.deepEqual(
      entryNames(fake),
      [...clusterIPEntries, ...nodePortEntries("external", 1), ...nodePortEntries("internal", 2)].sort(),
    );
    const external = headFlags(fake, `${NODE_IP}:${NODE_PORT}/TCP external slot 0`);
    assert.equal(external, serviceFlags.NODE_PORT | serviceFlags.EXTERNAL_LOCAL | serviceFlags.TWO_SCOPES);
    assert.equal(headFlags(fake, `${NODE_IP}:${NODE_PORT}/TCP internal slot 0`), serviceFlags.NODE_PORT);
    assert.equal(headFlags(fake, `${CLUSTER_IP}:80/TCP external slot 0`), serviceFlags.CLUSTER_IP);
  });

  test("internalTrafficPolicy Local: the ClusterIP reads the internal route in both scopes, so one scope", () => {
    const fake = new FakeBPFMaps();
    syncInto(fake, opts, nodePort("Cluster", "Local"));
    const names = entryNames(fake);
    assert.ok(
      names.every((n) => n.includes(" external ")),
      names.join("\n"),
    );
    assert.ok(names.includes(`${CLUSTER_IP}:80/TCP external slot 1`));
    assert.ok(!names.includes(`${CLUSTER_IP}:80/TCP external slot 2`), "the local endpoint only");
  });

  test("a partial sync switching between one and two scopes orders the flag around the internal entries", () => {
    const fake = new FakeBPFMaps();
    const changed = { changedServices: new Set(["ns1/web"]) };
    const np = `${NODE_IP}:${NODE_PORT}/TCP`;
    const one = syncInto(fake, opts, nodePort("Cluster"));
    const two = syncInto(fake, opts, { ...nodePort("Local"), ...changed }, one.state);
    assert.deepEqual(serviceSteps(two.steps), [
      `update: ${np} internal slot 1, ${np} internal slot 2, ${np} internal slot 0, ${np} external slot 0`,
      `delete: ${np} external slot 2`,
    ]);
    assert.equal(
      resolvedText(fake.contents("IPv4")),
      resolvedText(renderEBPF(opts, nodePort("Local")).state.contents),
    );
    const back = syncInto(fake, opts, { ...nodePort("Cluster"), ...changed }, two.state);
    assert.deepEqual(serviceSteps(back.steps), [
      `update: ${np} external slot 2, ${np} external slot 0`,
      `delete: ${np} internal slot 0, ${np} internal slot 1, ${np} internal slot 2`,
    ]);
    assert.equal(resolvedText(fake.contents("IPv4")), resolvedText(one.state.contents));
    assert.equal(back.sizes.services, 6);
    // A two-scope Service removed: the flagged slot 0 goes before the internal one it names.
    const again = syncInto(fake, opts, { ...nodePort("Local"), ...changed }, back.state);
    const gone = syncInto(fake, opts, { ...buildMaps("IPv4", [], []), ...changed }, again.state);
    assert.match(
      serviceSteps(gone.steps).join("\n"),
      new RegExp(`${np} external slot 0, ${np} internal slot 0`),
    );
    assert.deepEqual(entryNames(fake), []);
  });

  test("a first sync over two-scope entries an earlier run left, now one scope: the flag cleared first", () => {
    const fake = new FakeBPFMaps();
    syncInto(fake, opts, nodePort("Local"));
    const existing = {
      services: fake.dumpSync("IPv4", "services"),
      backends: fake.dumpSync("IPv4", "backends"),
      revNat: fake.dumpSync("IPv4", "revNat"),
    };
    syncInto(fake, opts, { ...nodePort("Cluster"), existing });
    assert.equal(
      resolvedText(fake.contents("IPv4")),
      resolvedText(renderEBPF(opts, nodePort("Cluster")).state.contents),
    );
  });

  test("the tracer: the node's sockets follow the flag to the internal scope, outside traffic stays external", () => {
    const contents = renderEBPF(opts, nodePort("Local")).state.contents;
    const packet = {
      sourceIP: "10.180.0.99",
      destIP: NODE_IP,
      destPort: NODE_PORT,
      protocol: "tcp" as const,
    };
    const fromPod = traceEBPF(contents, { ...packet, origin: "node" });
    assert.deepEqual(fromPod.errors, []);
    assert.equal(fromPod.output, "10.180.0.1:80, 10.180.1.1:80");
    const read = fromPod.paths[0]?.steps.map((s) => s.rule) ?? [];
    assert.deepEqual(read.slice(0, 2), [
      `${NODE_IP}:${NODE_PORT}/TCP external slot 0`,
      `${NODE_IP}:${NODE_PORT}/TCP internal slot 0`,
    ]);
    const fromOutside = traceEBPF(contents, { ...packet, sourceIP: "203.0.113.2", origin: "external" });
    assert.equal(fromOutside.output, "10.180.0.1:80");
    assert.equal(fromOutside.paths[0]?.steps[0]?.rule, `${NODE_IP}:${NODE_PORT}/TCP external slot 0`);
    // One scope: the node's sockets read the external entry itself.
    const one = traceEBPF(renderEBPF(opts, nodePort("Cluster")).state.contents, {
      ...packet,
      origin: "node",
    });
    assert.equal(one.paths[0]?.steps[0]?.rule, `${NODE_IP}:${NODE_PORT}/TCP external slot 0`);
    assert.equal(one.paths[0]?.steps[1]?.rule, `${NODE_IP}:${NODE_PORT}/TCP external slot 1`);
    assert.equal(one.output, "10.180.0.1:80, 10.180.1.1:80");
  });
});
