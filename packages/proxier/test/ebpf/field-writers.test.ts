// The field writers the renderer fills its batches with write the same bytes as encodeStruct, for every struct in
// both families, at any offset into a buffer; addresses given as text take parseIP's reading, including the
// text the fast path for plain IPv4 leaves to it, and are refused as encodeStruct refuses them.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { encodeStruct, fieldWriters, type RecordOf } from "../../src/ebpf/codec.js";
import {
  backendValue,
  fieldSize,
  fieldsOf,
  type Struct,
  structLayout,
  structs,
} from "../../src/ebpf/layout.js";

type Value = string | number | bigint;

/** A record whose every field differs from its neighbours and from zero. */
function sample(struct: Struct, family: IPFamily, seed: number): Record<string, Value> {
  const out: Record<string, Value> = {};
  fieldsOf(struct, family).forEach((f, i) => {
    if (f.name.startsWith("pad")) return;
    const n = seed * 37 + i + 1;
    if (f.type === "ip")
      out[f.name] = family === "IPv4" ? `10.${seed}.${i}.${n & 255}` : `fd00:${seed}::${n}`;
    else if (f.type === "u64") out[f.name] = (1n << 62n) + BigInt(n);
    else out[f.name] = (n * 0x0103) & (2 ** (8 * fieldSize(f.type, family)) - 1);
  });
  return out;
}

/** The record written with fieldWriters at `at` into a buffer with room either side; the record's bytes. */
function written(struct: Struct, family: IPFamily, record: Record<string, Value>, at = 5): Buffer {
  const size = structLayout(struct, family).size;
  const out = Buffer.alloc(at + size + 3);
  const writers = fieldWriters(struct, family) as Record<string, (o: Buffer, r: number, v: Value) => void>;
  for (const [name, write] of Object.entries(writers)) write(out, at, record[name] as Value);
  assert.ok(out.subarray(0, at).every((b) => b === 0) && out.subarray(at + size).every((b) => b === 0));
  return out.subarray(at, at + size);
}

const encoded = (struct: Struct, family: IPFamily, record: Record<string, Value>) =>
  encodeStruct(struct, family, record as RecordOf<Struct>);

describe("eBPF field writers", () => {
  for (const family of ["IPv4", "IPv6"] as const) {
    test(`${family}: every struct written as encodeStruct writes it`, () => {
      for (const struct of structs) {
        for (const seed of [1, 7, 200]) {
          const record = sample(struct, family, seed);
          assert.deepEqual(written(struct, family, record), encoded(struct, family, record), struct.name);
        }
      }
    });
  }

  test("addresses as text take parseIP's reading, or are refused as encodeStruct refuses them", () => {
    const texts = [
      "10.180.0.1",
      "0.0.0.0",
      "255.255.255.255",
      "10.180.0.01",
      "010.1.2.3",
      " 10.1.2.3",
      "::ffff:10.1.2.3",
      "256.1.2.3",
      "1.2.3",
      "1.2.3.4.5",
      "1..2.3",
      "10.1.2.3.",
      "fd00::1",
      "",
    ];
    for (const family of ["IPv4", "IPv6"] as const) {
      for (const address of texts) {
        const record = { address, port: 80, proto: 6, flags: 1 };
        let expected: Buffer | Error;
        try {
          expected = encoded(backendValue, family, record);
        } catch (err) {
          expected = err as Error;
        }
        if (expected instanceof Error) {
          assert.throws(() => written(backendValue, family, record), { message: expected.message }, address);
        } else assert.deepEqual(written(backendValue, family, record), expected, `${family} ${address}`);
      }
    }
  });

  test("an address given as bytes must have the family's size", () => {
    const record = { address: new Uint8Array(16), port: 80, proto: 6, flags: 0 };
    const writers = fieldWriters(backendValue, "IPv4");
    assert.throws(
      () => writers.address(Buffer.alloc(8), 0, record.address),
      /lb_backend\.address: .* 4 bytes, got 16/,
    );
  });
});
