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

/** Writes `record` into a new buffer of the struct's size in `family`'s layout. */
export function encodeStruct<S extends Struct>(struct: S, family: IPFamily, record: RecordOf<S>): Buffer {
  const layout = structLayout(struct, family);
  const out = Buffer.alloc(layout.size);
  const values = record as unknown as Record<string, string | number | bigint>;
  for (const f of fieldsOf(struct, family)) {
    if (isPadding(f.name)) continue;
    writeField(out, layout.offsets[f.name] ?? 0, f.type, values[f.name], family, `${struct.name}.${f.name}`);
  }
  return out;
}

export function decodeStruct<S extends Struct>(struct: S, family: IPFamily, bytes: Uint8Array): RecordOf<S> {
  const layout = structLayout(struct, family);
  if (bytes.length !== layout.size) {
    throw new Error(`${layout.name} is ${layout.size} bytes, got ${bytes.length}`);
  }
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
  const record: Record<string, string | number | bigint> = {};
  for (const f of fieldsOf(struct, family)) {
    if (!isPadding(f.name)) record[f.name] = readField(buf, layout.offsets[f.name] ?? 0, f.type, family);
  }
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
