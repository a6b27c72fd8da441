// Map keys and values as the kernel holds them, from and to records whose types come from layout.ts: an `ip` field
// is address text, a u64 a bigint, every other field a number; padding fields are left out and written as zeros.

import { formatIP, type IPFamily, parseIP } from "@switchyard/basics";
import { type FieldType, fieldsOf, type Struct, structLayout } from "./layout.js";

type FieldValue<T extends FieldType> = T extends "ip" ? string : T extends "u64" ? bigint : number;

/** The record of a struct: its fields by name, padding left out. */
export type RecordOf<S extends Struct> = {
  readonly [F in S["fields"][number] as F["name"] extends `pad${string}` ? never : F["name"]]: FieldValue<
    F["type"]
  >;
};

function isPadding(name: string): boolean {
  return name.startsWith("pad");
}

/** A struct's size and its data fields (padding left out) with their offsets, in one family. */
interface Plan {
  readonly name: string;
  readonly size: number;
  readonly fields: readonly { readonly name: string; readonly type: FieldType; readonly at: number }[];
}

// A sync encodes hundreds of thousands of records: the layout is worked out once per struct and family.
const plans = new WeakMap<Struct, Partial<Record<IPFamily, Plan>>>();

function planOf(struct: Struct, family: IPFamily): Plan {
  let byFamily = plans.get(struct);
  if (!byFamily) {
    byFamily = {};
    plans.set(struct, byFamily);
  }
  const known = byFamily[family];
  if (known) return known;
  const layout = structLayout(struct, family);
  const fields = fieldsOf(struct, family)
    .filter((f) => !isPadding(f.name))
    .map((f) => ({ name: f.name, type: f.type, at: layout.offsets[f.name] ?? 0 }));
  const plan = { name: layout.name, size: layout.size, fields };
  byFamily[family] = plan;
  return plan;
}

/** Writes `record` into a new buffer of the struct's size in `family`'s layout (padding zeroed). */
export function encodeStruct<S extends Struct>(struct: S, family: IPFamily, record: RecordOf<S>): Buffer {
  const plan = planOf(struct, family);
  // From Node's small-buffer pool: one allocation per record would keep the garbage collector busy.
  const out = Buffer.allocUnsafe(plan.size).fill(0);
  const values = record as unknown as Record<string, string | number | bigint>;
  for (const f of plan.fields)
    writeField(out, f.at, f.type, values[f.name], family, `${struct.name}.${f.name}`);
  return out;
}

export function decodeStruct<S extends Struct>(struct: S, family: IPFamily, bytes: Uint8Array): RecordOf<S> {
  const plan = planOf(struct, family);
  if (bytes.length !== plan.size) {
    throw new Error(`${plan.name} is ${plan.size} bytes, got ${bytes.length}`);
  }
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const record: Record<string, string | number | bigint> = {};
  for (const f of plan.fields) record[f.name] = readField(buf, f.at, f.type, family);
  return record as RecordOf<S>;
}

function writeField(
  out: Buffer,
  at: number,
  type: FieldType,
  value: string | number | bigint | undefined,
  family: IPFamily,
  what: string,
): void {
  if (value === undefined) throw new Error(`${what} is missing`);
  switch (type) {
    case "ip": {
      const ip = parseIP(String(value));
      if (ip === null || ip.family !== family)
        throw new Error(`${what}: ${String(value)} is not an ${family} address`);
      out.set(ip.bytes, at);
      return;
    }
    case "u64":
      out.writeBigUInt64LE(BigInt(value), at);
      return;
    case "u8":
      out.writeUInt8(Number(value), at);
      return;
    case "u16":
      out.writeUInt16LE(Number(value), at);
      return;
    case "be16":
      out.writeUInt16BE(Number(value), at);
      return;
    case "u32":
      out.writeUInt32LE(Number(value), at);
      return;
  }
}

function readField(buf: Buffer, at: number, type: FieldType, family: IPFamily): string | number | bigint {
  switch (type) {
    case "ip": {
      const size = family === "IPv6" ? 16 : 4;
      return formatIP({ family, bytes: new Uint8Array(buf.subarray(at, at + size)) });
    }
    case "u64":
      return buf.readBigUInt64LE(at);
    case "u8":
      return buf.readUInt8(at);
    case "u16":
      return buf.readUInt16LE(at);
    case "be16":
      return buf.readUInt16BE(at);
    case "u32":
      return buf.readUInt32LE(at);
  }
}
