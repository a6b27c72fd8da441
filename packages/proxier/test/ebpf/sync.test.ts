// Full and partial syncs: what a sync writes (only what changed, in the order that keeps references valid),
// numbers that stay with what they name, and a first sync over maps an earlier run left.
// Address plan: ../../src/testing/fixtures.ts.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { decodeStruct, encodeStruct } from "../../src/ebpf/codec.js";
import { serviceEntryName } from "../../src/ebpf/contents.js";
import { contentsText, resolvedText } from "../../src/ebpf/contents-text.js";
import { FakeBPFMaps } from "../../src/ebpf/fake.js";
import { NumberPool } from "../../src/ebpf/ids.js";
import { maps } from "../../src/ebpf/layout.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import { renderEBPF } from "../../src/ebpf/render.js";
import { buildMaps, makeService, makeSlice, NODE_IPV6, NODE_NAME } from "../../src/testing/fixtures.js";
import { ebpfOptions, syncInto } from "./helpers.js";

const p80 = [{ name: "p80", port: 80 }];
const svc = (name: string, ip: string, spec: Service["spec"] = {}) =>
  makeService("ns1", name, { clusterIP: ip, ports: [{ name: "p80", port: 80, protocol: "TCP" }], ...spec });
const slice = (name: string, ...ips: string[]) =>
  makeSlice(
    "ns1",
    name,
    "x",
    ips.map((ip) => ({ addresses: [ip], nodeName: NODE_NAME })),
    p80,
  );
const opts = ebpfOptions();

/** Each step as "op map: entry, entry", entries named (services) or numbered (backends, reverse NAT). */
function describeSteps(steps: readonly MapWriteStep[]): string[] {
  const name = (map: MapWriteStep["map"], key: Buffer) => {
    if (map === "services") return serviceEntryName(decodeStruct(maps.services.key, "IPv4", key));
    if (map === "backends") return String(decodeStruct(maps.backends.key, "IPv4", key).backendId);
    return String(decodeStruct(maps.revNat.key, "IPv4", key).revNatIndex);
  };
  return steps.map((s) => {
    const keys = s.op === "update" ? s.entries.map(([k]) => k) : s.keys;
    return `${s.op} ${s.map}: ${keys.map((k) => name(s.map, k)).join(", ")}`;
  });
}

/** What the proxy-owned maps hold, as a first sync gets it. */
function live(fake: FakeBPFMaps) {
  return {
    services: fake.dumpSync("IPv4", "services"),
    backends: fake.dumpSync("IPv4", "backends"),
    revNat: fake.dumpSync("IPv4", "revNat"),
    sourceRange: fake.dumpSync("IPv4", "sourceRange"),
  };
}

function fresh(services: Service[], slices: EndpointSlice[]): string {
  return resolvedText(renderEBPF(opts, buildMaps("IPv4", services, slices)).state.contents);
}

describe("eBPF sync", () => {
  test("a partial sync writes only the changed Service's entries, and ends where a full sync would", () => {
    const fake = new FakeBPFMaps();
    const services = [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")];
    const r1 = syncInto(
      fake,
      opts,
      buildMaps("IPv4", services, [slice("a", "10.180.0.1"), slice("b", "10.180.0.2")]),
    );
    const after = [slice("a", "10.180.0.1"), slice("b", "10.180.0.3")];
    const r2 = syncInto(
      fake,
      opts,
      { ...buildMaps("IPv4", services, after), changedServices: new Set(["ns1/b"]) },
      r1.state,
    );
    assert.equal(r2.fullSync, false);
    assert.deepEqual(describeSteps(r2.steps), [
      "update backends: 3",
      "update services: 172.30.0.42:80/TCP external slot 1",
      "delete backends: 2",
    ]);
    assert.equal(resolvedText(fake.contents("IPv4")), fresh(services, after));
    assert.equal(contentsText(r2.state.contents), contentsText(fake.contents("IPv4")));
  });

  test("a sync that changes nothing writes nothing", () => {
    const maps = buildMaps("IPv4", [svc("a", "172.30.0.41")], [slice("a", "10.180.0.1")]);
    const r1 = renderEBPF(opts, maps);
    const r2 = renderEBPF(opts, maps, r1.state);
    assert.equal(r2.fullSync, true);
    assert.deepEqual(r2.steps, []);
    const r3 = renderEBPF(opts, { ...maps, changedServices: new Set(["ns1/a", "ns1/gone"]) }, r2.state);
    assert.deepEqual(r3.steps, []);
    assert.deepEqual(renderEBPF(opts, { ...maps, changedServices: new Set() }, r3.state).steps, []);
  });

  test("steps come in the order that keeps every reference valid", () => {
    const fake = new FakeBPFMaps();
    const r1 = syncInto(
      fake,
      opts,
      buildMaps("IPv4", [svc("a", "172.30.0.41")], [slice("a", "10.180.0.1", "10.180.0.2")]),
    );
    // a loses a backend (its count shrinks), b replaces nothing: one of each kind of write.
    const r2 = renderEBPF(
      opts,
      buildMaps("IPv4", [svc("b", "172.30.0.42")], [slice("b", "10.180.0.3", "10.180.0.4")]),
      r1.state,
    );
    assert.deepEqual(describeSteps(r2.steps), [
      "update backends: 3, 4",
      "update revNat: 2",
      "update services: " +
        ["external slot 1", "external slot 2", "external slot 0"]
          .map((s) => `172.30.0.42:80/TCP ${s}`)
          .join(", "),
      "delete services: " +
        ["external slot 0", "external slot 1", "external slot 2"]
          .map((s) => `172.30.0.41:80/TCP ${s}`)
          .join(", "),
      "delete revNat: 1",
      "delete backends: 1, 2",
    ]);
    fake.writeSync("IPv4", r2.steps);
  });

  test("ids stay with their backend and frontend; a freed id is reused only once its entry is gone", () => {
    const fake = new FakeBPFMaps();
    const maps1 = buildMaps("IPv4", [svc("b", "172.30.0.42")], [slice("b", "10.180.0.1", "10.180.0.2")]);
    const r1 = syncInto(fake, opts, maps1);
    assert.deepEqual(
      [...r1.state.backendIds],
      [
        ["10.180.0.1:80/TCP", 1],
        ["10.180.0.2:80/TCP", 2],
      ],
    );
    // A Service first in key order arrives, and b swaps 10.180.0.2 for 10.180.0.3.
    const maps2 = buildMaps(
      "IPv4",
      [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")],
      [slice("a", "10.180.0.9"), slice("b", "10.180.0.1", "10.180.0.3")],
    );
    const r2 = syncInto(fake, opts, { ...maps2, changedServices: new Set(["ns1/a", "ns1/b"]) }, r1.state);
    const ids2 = new Map(r2.state.backendIds);
    assert.equal(ids2.get("10.180.0.1:80/TCP"), 1, "kept");
    assert.ok(
      ![2].includes(ids2.get("10.180.0.9:80/TCP") ?? 0) && ids2.get("10.180.0.3:80/TCP") !== 2,
      "2 is deleted in this sync",
    );
    assert.equal(r2.state.revNatIndexes.get("172.30.0.42:80"), 1, "b's reverse NAT index kept");
    const maps3 = buildMaps(
      "IPv4",
      [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")],
      [slice("a", "10.180.0.9"), slice("b", "10.180.0.1", "10.180.0.3", "10.180.0.4")],
    );
    const r3 = syncInto(fake, opts, { ...maps3, changedServices: new Set(["ns1/b"]) }, r2.state);
    assert.equal(r3.state.backendIds.get("10.180.0.4:80/TCP"), 2, "reused a sync later");
  });

  test("a first sync over maps an earlier run left: what is still wanted keeps its numbers, the rest is deleted, its numbers not reused meanwhile", () => {
    const fake = new FakeBPFMaps();
    syncInto(
      fake,
      opts,
      buildMaps(
        "IPv4",
        [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")],
        [slice("a", "10.180.0.1"), slice("b", "10.180.0.2", "10.180.0.3")],
      ),
    );
    const services = [svc("b", "172.30.0.42"), svc("c", "172.30.0.43")];
    const slices = [slice("b", "10.180.0.3", "10.180.0.4"), slice("c", "10.180.0.1")];
    const r = syncInto(fake, opts, { ...buildMaps("IPv4", services, slices), existing: live(fake) });
    assert.equal(resolvedText(fake.contents("IPv4")), fresh(services, slices));
    assert.deepEqual(
      [...r.state.backendIds].sort(),
      [
        ["10.180.0.1:80/TCP", 1],
        ["10.180.0.3:80/TCP", 3],
        ["10.180.0.4:80/TCP", 4],
      ],
      "the backends still there kept 1 and 3; 2 was live until this sync deleted it",
    );
    assert.deepEqual([...r.state.revNatIndexes].sort(), [
      ["172.30.0.42:80", 2],
      ["172.30.0.43:80", 3],
    ]);
    assert.deepEqual(r.sizes, { services: 5, backends: 3, revNat: 2, sourceRange: 0 });
  });

  test("a restart over the maps its last run wrote writes nothing; a frontend whose entries do not add up is rewritten", () => {
    const fake = new FakeBPFMaps();
    const ranged = {
      type: "LoadBalancer" as const,
      loadBalancerSourceRanges: ["192.168.7.0/24"],
      externalTrafficPolicy: "Local" as const,
    };
    const services = [
      svc("a", "172.30.0.41", { sessionAffinity: "ClientIP" }),
      svc("b", "172.30.0.42", ranged),
    ];
    const lb = { ...services[1], status: { loadBalancer: { ingress: [{ ip: "192.168.99.20" }] } } };
    const input = buildMaps(
      "IPv4",
      [services[0] as Service, lb as Service],
      [slice("a", "10.180.0.1", "10.180.0.2"), slice("b", "10.180.0.3")],
    );
    const first = syncInto(fake, ebpfOptions("IPv4", { nodePortIPs: ["10.0.0.9"] }), input);
    const again = renderEBPF(ebpfOptions("IPv4", { nodePortIPs: ["10.0.0.9"] }), {
      ...input,
      existing: live(fake),
    });
    assert.deepEqual(describeSteps(again.steps), [], "nothing to write");
    assert.deepEqual([...again.state.backendIds], [...first.state.backendIds]);
    assert.deepEqual([...again.state.revNatIndexes], [...first.state.revNatIndexes]);
    assert.equal(contentsText(again.state.contents), contentsText(fake.contents("IPv4")));

    // An earlier run stopped between writing a slot and the count that would reach it: a has a slot 3.
    const [key2, value2] = fake
      .dumpSync("IPv4", "services")
      .find(
        ([k]) =>
          serviceEntryName(decodeStruct(maps.services.key, "IPv4", k)) ===
          "172.30.0.41:80/TCP external slot 2",
      ) ?? [Buffer.alloc(0), Buffer.alloc(0)];
    const key3 = encodeStruct(maps.services.key, "IPv4", {
      ...decodeStruct(maps.services.key, "IPv4", key2),
      backendSlot: 3,
    });
    fake.writeSync("IPv4", [{ map: "services", op: "update", entries: [[key3, value2]] }]);
    const repaired = renderEBPF(ebpfOptions("IPv4", { nodePortIPs: ["10.0.0.9"] }), {
      ...input,
      existing: live(fake),
    });
    assert.deepEqual(describeSteps(repaired.steps), [
      "update services: 172.30.0.41:80/TCP external slot 1, 172.30.0.41:80/TCP external slot 2, 172.30.0.41:80/TCP external slot 0",
      "delete services: 172.30.0.41:80/TCP external slot 3",
    ]);
    fake.writeSync("IPv4", repaired.steps);
    assert.equal(contentsText(fake.contents("IPv4")), contentsText(first.state.contents));
  });

  test("a backend two Services share has one id; its flags come from the Service first in key order", () => {
    const terminating = { ready: false, serving: true, terminating: true };
    const slices = [
      makeSlice("ns1", "a", "x", [{ addresses: ["10.180.0.1"], conditions: terminating }], p80),
      slice("b", "10.180.0.1"),
    ];
    const r = renderEBPF(opts, buildMaps("IPv4", [svc("a", "172.30.0.41"), svc("b", "172.30.0.42")], slices));
    assert.deepEqual([...r.state.backendIds], [["10.180.0.1:80/TCP", 1]]);
    assert.match(contentsText(r.state.contents), /lb4_backends 1 => 10\.180\.0\.1:80\/TCP TERMINATING\n/);
  });

  test("a frontend two Services claim goes to the first in key order, and to the other when it leaves", () => {
    const fake = new FakeBPFMaps();
    const shared = { externalIPs: ["192.168.99.11"] };
    const services = [svc("a", "172.30.0.41", shared), svc("b", "172.30.0.42", shared)];
    const slices = [slice("a", "10.180.0.1"), slice("b", "10.180.0.2")];
    const r1 = syncInto(fake, opts, buildMaps("IPv4", services, slices));
    assert.match(
      resolvedText(fake.contents("IPv4")),
      /192\.168\.99\.11:80\/TCP external slot 1 => 10\.180\.0\.1:80/,
    );
    const left = [svc("b", "172.30.0.42", shared)];
    syncInto(
      fake,
      opts,
      { ...buildMaps("IPv4", left, slices), changedServices: new Set(["ns1/a"]) },
      r1.state,
    );
    assert.match(
      resolvedText(fake.contents("IPv4")),
      /192\.168\.99\.11:80\/TCP external slot 1 => 10\.180\.0\.2:80/,
    );
    assert.equal(resolvedText(fake.contents("IPv4")), fresh(left, slices));
  });

  test("no-local-endpoint counts and map sizes", () => {
    const local = { internalTrafficPolicy: "Local" as const };
    const r = renderEBPF(
      opts,
      buildMaps(
        "IPv4",
        [svc("a", "172.30.0.41", local), svc("b", "172.30.0.42", local)],
        [
          makeSlice("ns1", "a", "x", [{ addresses: ["10.180.1.1"], nodeName: "node2" }], p80),
          slice("b", "10.180.0.2"),
        ],
      ),
    );
    assert.deepEqual(r.noLocalEndpoints, { internal: 1, external: 0 });
    // One scope each: a's slot 0 (DROP), b's slot 0 and its slot.
    assert.deepEqual(r.sizes, { services: 3, backends: 1, revNat: 2, sourceRange: 0 });
  });

  test("misuse is refused: a used state, the other family's state or NodePort address", () => {
    const maps = buildMaps("IPv4", [svc("a", "172.30.0.41")], []);
    const r1 = renderEBPF(opts, maps);
    renderEBPF(opts, maps, r1.state);
    assert.throws(() => renderEBPF(opts, maps, r1.state), /already used/);
    const six = renderEBPF(ebpfOptions("IPv6"), buildMaps("IPv6", [], []));
    assert.throws(() => renderEBPF(opts, maps, six.state), /previous state is IPv6/);
    assert.throws(
      () => renderEBPF(ebpfOptions("IPv4", { nodePortIPs: [NODE_IPV6] }), maps),
      /not an IPv4 address/,
    );
  });
});

describe("NumberPool", () => {
  test("given up numbers wait a sync, ones in use are skipped, the smallest free is reused, running out is an error", () => {
    const ids = new NumberPool("test ids", 5);
    ids.inUse([2, 4]);
    assert.deepEqual([ids.take(), ids.take(), ids.take()], [1, 3, 5]);
    ids.release(1);
    ids.release(4);
    assert.throws(() => ids.take(), /test ids exhausted: all 5 are in use or awaiting deletion/);
    ids.startSync();
    assert.deepEqual([ids.take(), ids.take()], [1, 4]);
    assert.throws(() => ids.take(), /exhausted/);
  });
});
