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

/** What a field writer takes: an address as text or as its bytes (parsed once for many), a u64 as a bigint. */
type WriterInput<T extends FieldType> = T extends "ip"
  ? string | Uint8Array
  : T extends "u64"
    ? bigint
    : number;

type FieldWriter<T extends FieldType> = (out: Buffer, record: number, value: WriterInput<T>) => void;

/** One writer per data field of a struct: each puts its value into `out` at `record` plus the field's offset. */
export type FieldWriters<S extends Struct> = {
  readonly [F in S["fields"][number] as F["name"] extends `pad${string}` ? never : F["name"]]: FieldWriter<
    F["type"]
  >;
};

/** A struct's size and its data fields (padding left out) with their offsets, in one family. */
interface Plan {
  readonly name: string;
  readonly size: number;
  readonly fields: readonly { readonly name: string; readonly type: FieldType; readonly at: number }[];
  readonly writers: Readonly<Record<string, FieldWriter<FieldType>>>;
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
  const writers = Object.fromEntries(
    fields.map((f) => [f.name, fieldWriter(f.type, f.at, family, `${struct.name}.${f.name}`)]),
  );
  const plan = { name: layout.name, size: layout.size, fields, writers };
  byFamily[family] = plan;
  return plan;
}

/**
 * The struct's field writers in one family, for code that fills many records straight into one zeroed buffer
 * (padding is not written). Each field has its own function, so a call site always calling the same field's
 * writer stays monomorphic, and the same functions serve every sync.
 */
export function fieldWriters<S extends Struct>(struct: S, family: IPFamily): FieldWriters<S> {
  return planOf(struct, family).writers as FieldWriters<S>;
}

/** An address of `family` as the maps hold it; `what` names the field in the error. */
export function addressBytes(text: string, family: IPFamily, what: string): Uint8Array {
  const ip = parseIP(text);
  if (ip === null || ip.family !== family) throw new Error(`${what}: ${text} is not an ${family} address`);
  return ip.bytes;
}

/** `what` names the field in errors ("lb_backend.address"). */
function fieldWriter(type: FieldType, at: number, family: IPFamily, what: string): FieldWriter<FieldType> {
  switch (type) {
    case "ip": {
      const size = family === "IPv6" ? 16 : 4;
      return writer<"ip">((out, record, address) => {
        if (typeof address === "string") {
          if (family === "IPv4" && writeDottedQuad(out, record + at, address)) return;
          out.set(addressBytes(address, family, what), record + at);
        } else if (address.length !== size) {
          throw new Error(`${what}: an ${family} address is ${size} bytes, got ${address.length}`);
        } else out.set(address, record + at);
      });
    }
    case "u64":
      return writer<"u64">((out, record, value) => out.writeBigUInt64LE(value, record + at));
    case "u8":
      return writer<"u8">((out, record, value) => out.writeUInt8(value, record + at));
    case "u16":
      return writer<"u16">((out, record, value) => out.writeUInt16LE(value, record + at));
    case "be16":
      return writer<"be16">((out, record, value) => out.writeUInt16BE(value, record + at));
    case "u32":
      return writer<"u32">((out, record, value) => out.writeUInt32LE(value, record + at));
  }
}

/**
 * Plain IPv4 text ("10.180.0.1": four decimal parts, no leading zeros) written straight into `out`, which is
 * what parseIP reads it as; false for anything else (parseIP decides). A sync writes 100k backend addresses:
 * parsing each into a new array of its own was a tenth of the garbage collector's work.
 */
function writeDottedQuad(out: Buffer, at: number, text: string): boolean {
  let part = 0;
  let digits = 0;
  let parts = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x2e) {
      if (digits === 0 || parts === 3) return false;
      out[at + parts++] = part;
      part = 0;
      digits = 0;
    } else if (c >= 0x30 && c <= 0x39 && !(digits > 0 && part === 0)) {
      part = part * 10 + c - 0x30;
      digits++;
      if (part > 255) return false;
    } else return false;
  }
  if (digits === 0 || parts !== 3) return false;
  out[at + 3] = part;
  return true;
}

/** The writers are looked up by field name at run time: typed per field where they are made, erased here. */
function writer<T extends FieldType>(write: FieldWriter<T>): FieldWriter<FieldType> {
  return write as FieldWriter<FieldType>;
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
    case "ip":
      out.set(addressBytes(String(value), family, what), at);
      return;
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
