// The kernel map store over maps the loader pinned: what a write puts in a dump comes back byte for byte,
// deletions of keys already gone are no error, a full map is, and a sync at scale (10k Services × 10 endpoints:
// 110k service entries and 100k backends) goes through batch operations in one write, timed.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { type Libbpf, loadLibbpf } from "../../src/apply/bpf-libbpf.js";
import { loadSockPrograms, removeSockPrograms } from "../../src/apply/bpf-loader.js";
import { BPFMapError, KernelBPFMapStore } from "../../src/apply/bpf-map-store.js";
import { decodeStruct, encodeStruct } from "../../src/ebpf/codec.js";
import { StepPlan } from "../../src/ebpf/delta.js";
import {
  backendKey,
  backendValue,
  PROTO_TCP,
  revNatKey,
  revNatValue,
  SCOPE_INTERNAL,
  serviceKey,
  serviceValue,
} from "../../src/ebpf/layout.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";
import { ebpfTestsUnavailable, serviceSteps, TestCgroup, testPinRoot } from "./ebpf-fixture.js";

const skip = await ebpfTestsUnavailable();
if (skip) console.log(`# skipping eBPF map store kernel tests: ${skip}`);

const SERVICES = 10_000;
const ENDPOINTS = 10;

/** The IPv4 or IPv6 address number n of a /16-sized plan (10.x.y / fd00:10::x:y). */
function address(family: IPFamily, base: number, n: number): string {
  return family === "IPv6"
    ? `fd00:${base}::${Math.floor(n / 65536).toString(16)}:${(n % 65536).toString(16)}`
    : `${base}.${Math.floor(n / 65536) % 256}.${Math.floor(n / 256) % 256}.${n % 256}`;
}

/** A full sync of SERVICES × ENDPOINTS: backends, then every slot, then every service entry (one step each). */
function bigSync(family: IPFamily): MapWriteStep[] {
  const backends: Array<readonly [Buffer, Buffer]> = [];
  const slots: Array<readonly [Buffer, Buffer]> = [];
  const entries: Array<readonly [Buffer, Buffer]> = [];
  const key = (s: number, backendSlot: number) =>
    encodeStruct(serviceKey, family, {
      address: address(family, 172, s),
      dport: 80,
      backendSlot,
      proto: PROTO_TCP,
      scope: SCOPE_INTERNAL,
    });
  const value = (backendId: number, count: number, revNatIndex: number) =>
    encodeStruct(serviceValue, family, { backendId, affinityTimeout: 0, count, revNatIndex, flags: 0 });
  for (let s = 0; s < SERVICES; s++) {
    for (let e = 0; e < ENDPOINTS; e++) {
      const id = s * ENDPOINTS + e + 1;
      backends.push([
        encodeStruct(backendKey, family, { backendId: id }),
        encodeStruct(backendValue, family, {
          address: address(family, 10, id),
          port: 8080,
          proto: PROTO_TCP,
          flags: 0,
        }),
      ]);
      slots.push([key(s, e + 1), value(id, 0, (s % 65535) + 1)]);
    }
    entries.push([key(s, 0), value(0, ENDPOINTS, (s % 65535) + 1)]);
  }
  return [
    { map: "backends", op: "update", entries: backends },
    { map: "services", op: "update", entries: slots },
    { map: "services", op: "update", entries },
  ];
}

describe("the kernel map store", { skip: skip ?? false }, () => {
  let cgroup: TestCgroup | undefined;
  let store: KernelBPFMapStore | undefined;
  const pinRoot = testPinRoot("store");

  before(async () => {
    cgroup = new TestCgroup("store");
    const maxEntries = { services: 131072, backends: 131072, revNat: 16 };
    await loadSockPrograms({ cgroupPath: cgroup.path, pinRoot, maxEntries });
    store = await KernelBPFMapStore.open(pinRoot);
  });
  after(async () => {
    store?.close();
    await removeSockPrograms(pinRoot);
    await cgroup?.remove();
  });

  for (const family of ["IPv4", "IPv6"] as const) {
    test(`${family}: a write comes back from a dump byte for byte, and deletions take it away again`, async () => {
      const s = store as KernelBPFMapStore;
      const steps = serviceSteps({
        family,
        address: address(family, 172, 7),
        port: 443,
        proto: "TCP",
        revNatIndex: 9,
        backends: [
          { id: 1, address: address(family, 10, 1), port: 8443 },
          { id: 2, address: address(family, 10, 2), port: 8443 },
        ],
      });
      await s.write(family, steps);
      assert.equal(s.writeMethod, "batch");
      const written = steps.flatMap((st) => (st.op === "update" ? st.entries : []));
      const dumped = [...(await s.dump(family, "services")), ...(await s.dump(family, "backends"))];
      const hex = (entries: ReadonlyArray<readonly [Buffer, Buffer]>) =>
        entries.map(([k, v]) => `${k.toString("hex")}=${v.toString("hex")}`).sort();
      assert.deepEqual(hex(dumped), hex(written));
      const entry = dumped.find(([k]) => decodeStruct(serviceKey, family, k).backendSlot === 0) as [
        Buffer,
        Buffer,
      ];
      assert.deepEqual(decodeStruct(serviceValue, family, entry[1]), {
        backendId: 0,
        affinityTimeout: 0,
        count: 2,
        revNatIndex: 9,
        flags: 0,
      });

      // The other way round, and with a key already gone among them.
      const gone = encodeStruct(backendKey, family, { backendId: 99 });
      await s.write(family, [
        { map: "services", op: "delete", keys: written.slice(2).map(([k]) => k) },
        { map: "backends", op: "delete", keys: [gone, ...written.slice(0, 2).map(([k]) => k), gone] },
      ]);
      assert.equal(s.writeMethod, "batch");
      assert.deepEqual(await s.dump(family, "services"), []);
      assert.deepEqual(await s.dump(family, "backends"), []);
    });
  }

  test("a kernel that refuses batch operations gets the same entries element by element", async () => {
    const EINVAL = 22;
    const real = await loadLibbpf();
    const refusing: Libbpf = {
      ...real,
      updateBatch: () => -EINVAL,
      deleteBatch: () => -EINVAL,
      lookupBatch: () => -EINVAL,
    };
    const slow = new KernelBPFMapStore(refusing, pinRoot);
    try {
      const steps = serviceSteps({
        family: "IPv4",
        address: "172.30.0.99",
        port: 53,
        proto: "UDP",
        revNatIndex: 3,
        backends: [{ id: 7, address: "10.180.0.7", port: 5353 }],
      });
      await slow.write("IPv4", steps);
      assert.equal(slow.writeMethod, "per-element");
      const dumped = await slow.dump("IPv4", "services");
      assert.equal(dumped.length, 2);
      // What the element-by-element path wrote, the batch path reads back the same.
      const viaBatch = await (store as KernelBPFMapStore).dump("IPv4", "services");
      const hex = (e: Array<[Buffer, Buffer]>) =>
        e.map(([k, v]) => k.toString("hex") + v.toString("hex")).sort();
      assert.deepEqual(hex(dumped), hex(viaBatch));
      await slow.write("IPv4", [
        { map: "services", op: "delete", keys: dumped.map(([k]) => k) },
        { map: "backends", op: "delete", keys: [encodeStruct(backendKey, "IPv4", { backendId: 7 })] },
      ]);
      assert.equal(slow.writeMethod, "per-element");
      assert.deepEqual(await slow.dump("IPv4", "services"), []);
      assert.deepEqual(await slow.dump("IPv4", "backends"), []);
    } finally {
      slow.close();
    }
  });

  test("rendered steps go packed (keys gone among the deletions), and element by element where batches are refused", async () => {
    const EINVAL = 22;
    const real = await loadLibbpf();
    const refusing: Libbpf = { ...real, updateBatch: () => -EINVAL, deleteBatch: () => -EINVAL };
    const slow = new KernelBPFMapStore(refusing, pinRoot);
    const backend = (n: number) => ({ address: `10.180.3.${n}`, port: 8080 + n, proto: PROTO_TCP, flags: 0 });
    const ids = [11, 12, 13];
    try {
      for (const [s, method] of [
        [store as KernelBPFMapStore, "batch"],
        [slow, "per-element"],
      ] as const) {
        const writes = new StepPlan("IPv4");
        for (const id of ids) writes.updateBackend(id, backend(id));
        const [update] = writes.steps();
        assert.ok(update?.op === "update" && update.batch, "a rendered step carries its entries packed");
        await s.write("IPv4", [update]);
        assert.equal(s.writeMethod, method);
        const dumped = await s.dump("IPv4", "backends");
        const values = dumped.map(([k, v]) => [
          decodeStruct(backendKey, "IPv4", k).backendId,
          decodeStruct(backendValue, "IPv4", v),
        ]);
        assert.deepEqual(
          values.sort(([a], [b]) => Number(a) - Number(b)),
          ids.map((id) => [id, backend(id)]),
        );

        // Id 99 was never written: the batch stops at it, and the rest after it are deleted all the same.
        const deletes = new StepPlan("IPv4");
        for (const id of [11, 99, 12, 13]) deletes.deleteBackend(id);
        await s.write("IPv4", deletes.steps());
        assert.equal(s.writeMethod, method);
        assert.deepEqual(await s.dump("IPv4", "backends"), []);
      }
    } finally {
      slow.close();
    }
  });

  test("a full map refuses the write with E2BIG, saying which map and how far the batch got", async () => {
    const s = store as KernelBPFMapStore;
    const entries = Array.from(
      { length: 20 },
      (_, i) =>
        [
          encodeStruct(revNatKey, "IPv4", { revNatIndex: i + 1 }),
          encodeStruct(revNatValue, "IPv4", { address: "172.30.0.1", port: 80 }),
        ] as const,
    );
    await assert.rejects(s.write("IPv4", [{ map: "revNat", op: "update", entries }]), (e: Error) => {
      assert.ok(e instanceof BPFMapError);
      assert.match(e.message, /lb4_reverse_nat update \(16 of 20\): E2BIG/);
      return true;
    });
    assert.equal((await s.dump("IPv4", "revNat")).length, 16);
  });

  test(`a sync of ${SERVICES} Services × ${ENDPOINTS} endpoints in one write, a dump, and its deletion`, async () => {
    const s = store as KernelBPFMapStore;
    const steps = bigSync("IPv4");
    const count = steps.reduce((n, st) => n + (st.op === "update" ? st.entries.length : 0), 0);
    let t = performance.now();
    await s.write("IPv4", steps);
    const writeMs = performance.now() - t;
    assert.equal(s.writeMethod, "batch");
    t = performance.now();
    const services = await s.dump("IPv4", "services");
    const backends = await s.dump("IPv4", "backends");
    const dumpMs = performance.now() - t;
    assert.equal(services.length, SERVICES * (ENDPOINTS + 1));
    assert.equal(backends.length, SERVICES * ENDPOINTS);
    t = performance.now();
    await s.write("IPv4", [
      { map: "services", op: "delete", keys: services.map(([k]) => k) },
      { map: "backends", op: "delete", keys: backends.map(([k]) => k) },
    ]);
    const deleteMs = performance.now() - t;
    assert.deepEqual(await s.dump("IPv4", "services"), []);
    console.log(
      `# ${count} entries: write ${writeMs.toFixed(0)} ms (batch), dump ${dumpMs.toFixed(0)} ms, delete ${deleteMs.toFixed(0)} ms`,
    );
  });
});
