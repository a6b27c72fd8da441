// The layout every map is read with: no implicit padding in any struct (keys are compared byte for byte, and
// C and TypeScript must agree on every offset), and records survive encode then decode in both families.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { decodeStruct, encodeStruct, type RecordOf } from "../../src/ebpf/codec.js";
import { fieldSize, fieldsOf, maps, type Struct, structLayout, structs } from "../../src/ebpf/layout.js";

const FAMILIES: IPFamily[] = ["IPv4", "IPv6"];

/** A record with every field set to a value that differs from its neighbours' (and from zero). */
function sampleRecord(
  struct: Struct,
  family: IPFamily,
  seed: number,
): Record<string, string | number | bigint> {
  const out: Record<string, string | number | bigint> = {};
  fieldsOf(struct, family).forEach((f, i) => {
    if (f.name.startsWith("pad")) return;
    const n = seed * 31 + i + 1;
    if (f.type === "ip")
      out[f.name] = family === "IPv4" ? `10.${seed}.${i}.${n & 255}` : `fd00:${seed}::${n.toString(16)}`;
    else if (f.type === "u64") out[f.name] = (1n << 63n) + BigInt(n);
    else out[f.name] = (n * 0x0101) & (2 ** (8 * fieldSize(f.type, family)) - 1);
  });
  return out;
}

describe("eBPF layout", () => {
  for (const family of FAMILIES) {
    for (const struct of structs) {
      test(`${family} ${struct.name}: fields back to back, size a multiple of its alignment`, () => {
        const layout = structLayout(struct, family);
        let at = 0;
        for (const f of fieldsOf(struct, family)) {
          assert.equal(layout.offsets[f.name], at, `${f.name} starts where the previous field ends`);
          at += fieldSize(f.type, family);
        }
        assert.equal(layout.size, at, "no tail padding");
      });
    }
  }

  test("the sizes the programs' structs have", () => {
    const size = (s: Struct, f: IPFamily) => structLayout(s, f).size;
    assert.deepEqual(
      Object.values(maps).map((m) => [
        m.name,
        size(m.key, "IPv4"),
        size(m.value, "IPv4"),
        size(m.key, "IPv6"),
        size(m.value, "IPv6"),
      ]),
      [
        ["services", 12, 16, 24, 16],
        ["backends", 4, 8, 4, 20],
        ["reverse_nat", 4, 8, 4, 20],
        ["reverse_sk", 16, 8, 32, 20],
        ["affinity", 16, 16, 16, 16],
        ["stale_flows", 12, 4, 36, 4],
        ["masquerade", 4, 4, 4, 16],
        ["src_range", 12, 1, 24, 1],
      ],
    );
  });
});

describe("eBPF codec", () => {
  for (const family of FAMILIES) {
    for (const struct of structs) {
      test(`${family} ${struct.name} round-trips`, () => {
        for (const seed of [1, 2, 200]) {
          const record = sampleRecord(struct, family, seed) as RecordOf<typeof struct>;
          const bytes = encodeStruct(struct, family, record);
          assert.equal(bytes.length, structLayout(struct, family).size);
          assert.deepEqual(decodeStruct(struct, family, bytes), record);
        }
      });
    }
  }

  test("ports are network order, other numbers little-endian, padding zero", () => {
    const key = encodeStruct(maps.services.key, "IPv4", {
      address: "172.30.0.41",
      dport: 80,
      backendSlot: 2,
      proto: 6,
      scope: 1,
    });
    assert.equal(key.toString("hex"), "ac1e0029" + "0050" + "0200" + "06" + "01" + "0000");
  });

  test("an address of the other family, a missing field, a short buffer are refused", () => {
    const backend = { address: "fd00::1", port: 80, proto: 6, flags: 0 };
    assert.throws(() => encodeStruct(maps.backends.value, "IPv4", backend), /not an IPv4 address/);
    assert.throws(
      () => encodeStruct(maps.backends.value, "IPv6", { ...backend, port: undefined } as never),
      /lb_backend\.port is missing/,
    );
    assert.throws(() => decodeStruct(maps.backends.value, "IPv6", new Uint8Array(8)), /is 20 bytes, got 8/);
  });
});
