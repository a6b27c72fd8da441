// FakeBPFMaps refuses what the kernel refuses, and any write after which a program could meet a dangling
// reference; a refused step changes nothing, the steps before it stay.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { encodeStruct } from "../../src/ebpf/codec.js";
import { contentsText } from "../../src/ebpf/contents-text.js";
import { BPFMapError, FakeBPFMaps } from "../../src/ebpf/fake.js";
import { maps, SCOPE_EXTERNAL, SCOPE_INTERNAL, serviceFlags } from "../../src/ebpf/layout.js";
import type { MapWriteStep } from "../../src/ebpf/map-store.js";

const F = "IPv4";
const backendKey = (backendId: number) => encodeStruct(maps.backends.key, F, { backendId });
const backend = (backendId: number, address: string): [Buffer, Buffer] => [
  backendKey(backendId),
  encodeStruct(maps.backends.value, F, { address, port: 80, proto: 6, flags: 0 }),
];
const revNatKey = (revNatIndex: number) => encodeStruct(maps.revNat.key, F, { revNatIndex });
const revNat = (revNatIndex: number): [Buffer, Buffer] => [
  revNatKey(revNatIndex),
  encodeStruct(maps.revNat.value, F, { address: "172.30.0.41", port: 80 }),
];
const slotKey = (backendSlot: number, scope = SCOPE_EXTERNAL) =>
  encodeStruct(maps.services.key, F, { address: "172.30.0.41", dport: 80, backendSlot, proto: 6, scope });
const slot = (
  backendSlot: number,
  backendId: number,
  revNatIndex = 1,
  scope = SCOPE_EXTERNAL,
): [Buffer, Buffer] => [
  slotKey(backendSlot, scope),
  encodeStruct(maps.services.value, F, { backendId, affinityTimeout: 0, count: 0, revNatIndex, flags: 0 }),
];
const head = (count: number, revNatIndex = 1, flags = 0, scope = SCOPE_EXTERNAL): [Buffer, Buffer] => [
  slotKey(0, scope),
  encodeStruct(maps.services.value, F, {
    backendId: 0,
    affinityTimeout: 0,
    count,
    revNatIndex,
    flags: serviceFlags.NODE_PORT | flags,
  }),
];
const update = (map: MapWriteStep["map"], ...entries: [Buffer, Buffer][]): MapWriteStep => ({
  map,
  op: "update",
  entries,
});
const remove = (map: MapWriteStep["map"], ...keys: Buffer[]): MapWriteStep => ({ map, op: "delete", keys });

/** A service with two backends, written in the right order. */
function populated(): FakeBPFMaps {
  const fake = new FakeBPFMaps();
  fake.writeSync(F, [
    update("backends", backend(1, "10.180.0.1"), backend(2, "10.180.0.2")),
    update("revNat", revNat(1)),
    update("services", slot(1, 1), slot(2, 2), head(2)),
  ]);
  return fake;
}

function refused(fake: FakeBPFMaps, steps: MapWriteStep[], code: string, message: RegExp): void {
  const before = contentsText(fake.contents(F));
  assert.throws(
    () => fake.writeSync(F, steps),
    (err) => err instanceof BPFMapError && err.code === code && message.test(err.message),
  );
  assert.equal(contentsText(fake.contents(F)), before, "a refused step leaves the maps as they were");
}

describe("FakeBPFMaps", () => {
  test("holds what was written, and dumps bytes", async () => {
    const fake = populated();
    assert.equal(
      contentsText(fake.contents(F)),
      [
        "lb4_backends 1 => 10.180.0.1:80/TCP",
        "lb4_backends 2 => 10.180.0.2:80/TCP",
        "lb4_reverse_nat 1 => 172.30.0.41:80",
        "lb4_services 172.30.0.41:80/TCP external slot 0 => count 2, revNat 1, flags NODE_PORT",
        "lb4_services 172.30.0.41:80/TCP external slot 1 => backend 1, revNat 1",
        "lb4_services 172.30.0.41:80/TCP external slot 2 => backend 2, revNat 1",
      ].join("\n"),
    );
    const dump = await fake.dump(F, "backends");
    assert.deepEqual(dump, [backend(1, "10.180.0.1"), backend(2, "10.180.0.2")]);
    assert.deepEqual(await fake.dump("IPv6", "backends"), [], "the families are apart");
  });

  test("a slot naming a missing backend", () => {
    const fake = new FakeBPFMaps();
    fake.writeSync(F, [update("revNat", revNat(1))]);
    refused(fake, [update("services", slot(1, 7))], "EDANGLING", /missing backend 7/);
  });

  test("an entry naming a missing reverse NAT index", () => {
    const fake = populated();
    refused(fake, [update("services", head(2, 9))], "EDANGLING", /missing reverse NAT 9/);
  });

  test("a count reaching past the slots present, even for a moment inside a batch", () => {
    const fake = populated();
    refused(fake, [update("services", head(3))], "EDANGLING", /counts 3 but slot 3 is missing/);
    // Slot 0 before the slot it reaches: the end of the batch would be fine, the moment between is not.
    refused(fake, [update("services", head(3), slot(3, 1))], "EDANGLING", /slot 3 is missing/);
    fake.writeSync(F, [update("services", slot(3, 1), head(3))]);
  });

  test("deleting a slot the count still reaches, or a backend or reverse NAT still named", () => {
    const fake = populated();
    refused(fake, [remove("services", slotKey(2))], "EDANGLING", /slot 2 deleted while slot 0 counts 2/);
    refused(fake, [remove("backends", backendKey(2))], "EDANGLING", /backend 2 is still named by 1 slot/);
    refused(fake, [remove("revNat", revNatKey(1))], "EDANGLING", /reverse NAT 1 is still named/);
    // The count shrinks first, then the slot goes, then its backend.
    fake.writeSync(F, [
      update("services", head(1)),
      remove("services", slotKey(2)),
      remove("backends", backendKey(2)),
    ]);
    assert.equal(fake.contents(F).backends.size, 1);
  });

  test("TWO_SCOPES on the external slot 0 while the internal slot 0 is missing, even for a moment", () => {
    const fake = populated();
    const { TWO_SCOPES } = serviceFlags;
    const internal = [slot(1, 2, 1, SCOPE_INTERNAL), head(1, 1, 0, SCOPE_INTERNAL)];
    refused(
      fake,
      [update("services", head(2, 1, TWO_SCOPES))],
      "EDANGLING",
      /says TWO_SCOPES but .* internal slot 0 is missing/,
    );
    // The flag before the internal scope it sends the sockets to: the moment between dangles.
    refused(fake, [update("services", head(2, 1, TWO_SCOPES), ...internal)], "EDANGLING", /TWO_SCOPES/);
    fake.writeSync(F, [update("services", ...internal, head(2, 1, TWO_SCOPES))]);
    // The other way: the internal slot 0 goes only once the flag is cleared.
    const internalKeys = [slotKey(0, SCOPE_INTERNAL), slotKey(1, SCOPE_INTERNAL)];
    refused(
      fake,
      [remove("services", ...internalKeys)],
      "EDANGLING",
      /internal slot 0 deleted while the external slot 0 says TWO_SCOPES/,
    );
    refused(
      fake,
      [remove("services", ...internalKeys), update("services", head(2))],
      "EDANGLING",
      /TWO_SCOPES/,
    );
    fake.writeSync(F, [update("services", head(2)), remove("services", ...internalKeys)]);
    assert.equal(fake.contents(F).services.size, 3);
  });

  test("what the kernel refuses: sizes, a missing key, a full map", () => {
    const fake = populated();
    const [key, value] = backend(3, "10.180.0.3");
    refused(fake, [update("backends", [key, value.subarray(0, 4)])], "EINVAL", /value is 8 bytes, got 4/);
    refused(fake, [update("backends", [Buffer.alloc(8), value])], "EINVAL", /key is 4 bytes, got 8/);
    refused(fake, [remove("backends", backendKey(9))], "ENOENT", /no element/);
    const small = new FakeBPFMaps({ maxEntries: { backends: 1 } });
    small.writeSync(F, [update("backends", backend(1, "10.180.0.1"))]);
    refused(small, [update("backends", backend(2, "10.180.0.2"))], "E2BIG", /full \(1\)/);
    small.writeSync(F, [update("backends", backend(1, "10.180.0.9"))]);
  });

  test("a refused step is undone whole; the steps before it stay", () => {
    const fake = populated();
    assert.throws(
      () =>
        fake.writeSync(F, [
          update("backends", backend(3, "10.180.0.3")),
          update("services", slot(3, 3), slot(4, 8)),
        ]),
      /step 1 \(update services\)/,
    );
    const c = fake.contents(F);
    assert.ok(c.backends.has(3), "step 0 stays");
    assert.equal(c.services.size, 3, "slot 3 of the refused step is gone again");
  });

  test("SOURCE_RANGES over an index without a range, or its last range deleted under the flag", () => {
    const rangeKey = (prefix: number, address: string) =>
      encodeStruct(maps.sourceRange.key, F, { prefixLen: 32 + prefix, revNatIndex: 1, address });
    const range = (prefix: number, address: string): [Buffer, Buffer] => [
      rangeKey(prefix, address),
      encodeStruct(maps.sourceRange.value, F, { allowed: 1 }),
    ];
    const ranged: [Buffer, Buffer] = [
      slotKey(0),
      encodeStruct(maps.services.value, F, {
        backendId: 0,
        affinityTimeout: 0,
        count: 2,
        revNatIndex: 1,
        flags: serviceFlags.LOAD_BALANCER | serviceFlags.SOURCE_RANGES,
      }),
    ];
    const fake = populated();
    refused(
      fake,
      [update("services", ranged)],
      "EDANGLING",
      /SOURCE_RANGES but reverse NAT 1 has no source range/,
    );
    fake.writeSync(F, [update("sourceRange", range(25, "203.0.113.0"), range(32, "1.2.3.4"))]);
    fake.writeSync(F, [update("services", ranged)]);
    assert.deepEqual(fake.contents(F).sourceRanges?.get(1), ["1.2.3.4/32", "203.0.113.0/25"]);
    fake.writeSync(F, [remove("sourceRange", rangeKey(32, "1.2.3.4"))]);
    refused(
      fake,
      [remove("sourceRange", rangeKey(25, "203.0.113.0"))],
      "EDANGLING",
      /last source range deleted/,
    );
    fake.writeSync(F, [update("services", head(2)), remove("sourceRange", rangeKey(25, "203.0.113.0"))]);
    refused(fake, [update("sourceRange", range(33, "1.2.3.4"))], "EINVAL", /prefix length 65 is too long/);
  });
});
