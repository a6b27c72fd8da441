import { type IPFamily, writeIPv4, writeIPv6 } from "@switchyard/basics";
import { typeNumber } from "./constants.js";
import type { Edns, Message, ResourceRecord } from "./message.js";
import { nameToLabels } from "./name.js";

/** The largest DNS message: the TCP length prefix is 16 bits. */
export const MAX_MESSAGE_SIZE = 65535;

/** The Writer's scratch space, shared by every encode (see Writer). */
const scratch = Buffer.allocUnsafe(MAX_MESSAGE_SIZE);

export class EncodeError extends Error {
  override name = "EncodeError";
}

/**
 * Writes bytes into a fixed buffer and remembers where each name suffix was written, so later names can
 * point back at it (RFC 1035 4.1.4). dns-packet never compresses, which is why this exists.
 */
class Writer {
  offset = 0;
  private readonly suffixes = new Map<string, number>();

  /**
   * `buf` is scratch space: encoding is synchronous and the result is copied out, so one buffer serves
   * every message (a fresh zero-filled 64 KiB buffer per reply was the largest cost of answering).
   */
  constructor(
    private readonly compress: boolean,
    readonly buf: Buffer = scratch,
  ) {}

  u8(v: number): void {
    this.ensure(1);
    this.buf.writeUInt8(v, this.offset);
    this.offset += 1;
  }

  u16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.offset);
    this.offset += 2;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v >>> 0, this.offset);
    this.offset += 4;
  }

  bytes(b: Buffer): void {
    this.ensure(b.length);
    b.copy(this.buf, this.offset);
    this.offset += b.length;
  }

  /**
   * An address of `family`, written in place (a leading zero in an IPv4 field reads as decimal); throws
   * EncodeError, naming `owner`, when it is not one.
   */
  address(text: string, family: IPFamily, owner: string): void {
    const size = family === "IPv4" ? 4 : 16;
    this.ensure(size);
    const write = family === "IPv4" ? writeIPv4 : writeIPv6;
    if (!write(this.buf, this.offset, text, "sloppy")) throw badAddress(family, text, owner);
    this.offset += size;
  }

  /**
   * Writes a name; with `compressible` it may end in a pointer. Suffix keys are case-sensitive so a
   * pointer never changes the spelling of the name it replaces.
   */
  name(name: string, compressible: boolean, target = true): void {
    const labels = nameToLabels(name);
    // keys[i] names the suffix starting at label i; built right to left, each from the one after it.
    const keys: string[] = new Array(labels.length);
    let suffix = "";
    for (let i = labels.length - 1; i >= 0; i--) {
      const label = (labels[i] as Buffer).toString("latin1");
      suffix = i === labels.length - 1 ? label : `${label}\u0000${suffix}`;
      keys[i] = suffix;
    }
    for (let i = 0; i < labels.length; i++) {
      const key = keys[i] as string;
      const earlier = this.suffixes.get(key);
      if (this.compress && compressible && earlier !== undefined) {
        this.u16(0xc000 | earlier);
        return;
      }
      if (target && this.offset < 0x3fff && !this.suffixes.has(key)) this.suffixes.set(key, this.offset);
      const label = labels[i] as Buffer;
      this.u8(label.length);
      this.bytes(label);
    }
    this.u8(0);
  }

  private ensure(n: number): void {
    if (this.offset + n > this.buf.length)
      throw new EncodeError(`message larger than ${MAX_MESSAGE_SIZE} bytes`);
  }
}

export interface EncodeOptions {
  /** Name compression (RFC 1035 4.1.4); default true. */
  compress?: boolean;
  /**
   * Whether records may point into the question name; default true. The cache turns it off so that it
   * can rewrite the question's case in stored bytes without changing any record's owner name.
   */
  pointIntoQuestion?: boolean;
}

/**
 * A copy of `buf` in memory of its own. Small Buffers are slices of a shared pool slab (64 KiB on Node 24),
 * and one slice kept alive keeps its whole slab: encodings that live long (cache entries, kept replies)
 * are copied with this, or each would pin a slab of mostly per-query garbage.
 */
export function ownedCopy(buf: Buffer): Buffer {
  const out = Buffer.allocUnsafeSlow(buf.length);
  buf.copy(out, 0);
  return out;
}

/** Encodes a message. */
export function encodeMessage(msg: Message, options: EncodeOptions = {}): Buffer {
  const w = new Writer(options.compress ?? true);
  const extendedRcode = msg.rcode >> 4;
  if (extendedRcode > 0 && !msg.edns) {
    throw new EncodeError(`rcode ${msg.rcode} needs an OPT record to carry its upper bits`);
  }
  w.u16(msg.id);
  w.u16(
    (msg.qr ? 0x8000 : 0) |
      ((msg.opcode & 0xf) << 11) |
      (msg.aa ? 0x400 : 0) |
      (msg.tc ? 0x200 : 0) |
      (msg.rd ? 0x100 : 0) |
      (msg.ra ? 0x80 : 0) |
      (msg.z ? 0x40 : 0) |
      (msg.ad ? 0x20 : 0) |
      (msg.cd ? 0x10 : 0) |
      (msg.rcode & 0xf),
  );
  w.u16(msg.question.length);
  w.u16(msg.answer.length);
  w.u16(msg.authority.length);
  w.u16(msg.additional.length + (msg.edns ? 1 : 0));
  for (const q of msg.question) {
    w.name(q.name, true, options.pointIntoQuestion ?? true);
    w.u16(q.type);
    w.u16(q.class);
  }
  for (const rr of msg.answer) writeRecord(w, rr);
  for (const rr of msg.authority) writeRecord(w, rr);
  for (const rr of msg.additional) writeRecord(w, rr);
  if (msg.edns) {
    const e = msg.edns;
    w.u8(0); // the root name
    w.u16(41);
    w.u16(e.udpSize);
    w.u8(extendedRcode & 0xff);
    w.u8(e.version);
    w.u16(e.dnssecOk ? 0x8000 : 0);
    const start = w.offset;
    w.u16(0);
    for (const opt of e.options) {
      w.u16(opt.code);
      w.u16(opt.data.length);
      w.bytes(opt.data);
    }
    w.buf.writeUInt16BE(w.offset - start - 2, start);
  }
  return Buffer.from(w.buf.subarray(0, w.offset));
}

/** The OPT pseudo-record on its own (rcode upper bits 0), to append to an already encoded reply. */
export function encodeOpt(edns: Edns): Buffer {
  const size = edns.options.reduce((n, o) => n + 4 + o.data.length, 0);
  const b = Buffer.alloc(11 + size);
  b.writeUInt16BE(41, 1);
  b.writeUInt16BE(edns.udpSize, 3);
  b.writeUInt8(edns.version, 6);
  b.writeUInt16BE(edns.dnssecOk ? 0x8000 : 0, 7);
  b.writeUInt16BE(size, 9);
  let at = 11;
  for (const o of edns.options) {
    b.writeUInt16BE(o.code, at);
    b.writeUInt16BE(o.data.length, at + 2);
    o.data.copy(b, at + 4);
    at += 4 + o.data.length;
  }
  return b;
}

/** The encoded size of a message, compressed unless told otherwise. */
export function encodedLength(msg: Message, options: { compress?: boolean } = {}): number {
  return encodeMessage(msg, options).length;
}

function writeRecord(w: Writer, rr: ResourceRecord): void {
  const type = typeNumber(rr.type);
  if (type === undefined) throw new EncodeError(`unknown record type ${rr.type} for ${rr.name}`);
  w.name(rr.name, true);
  w.u16(type);
  w.u16(rr.class);
  if (!Number.isInteger(rr.ttl) || rr.ttl < 0 || rr.ttl > 0xffffffff) {
    throw new EncodeError(`bad TTL ${rr.ttl} for ${rr.name} ${rr.type}`);
  }
  w.u32(rr.ttl);
  const start = w.offset;
  w.u16(0);
  writeRdata(w, rr);
  w.buf.writeUInt16BE(w.offset - start - 2, start);
}

// Only the RFC 1035 types may have their rdata names compressed; SRV targets must not be (RFC 2782, 3597).
function writeRdata(w: Writer, rr: ResourceRecord): void {
  switch (rr.type) {
    case "A":
      w.address(rr.data, "IPv4", rr.name);
      return;
    case "AAAA":
      w.address(rr.data, "IPv6", rr.name);
      return;
    case "CNAME":
    case "PTR":
    case "NS":
      w.name(rr.data, true);
      return;
    case "DNAME":
      w.name(rr.data, false);
      return;
    case "MX":
      w.u16(rr.data.preference);
      w.name(rr.data.exchange, true);
      return;
    case "SOA":
      w.name(rr.data.mname, true);
      w.name(rr.data.rname, true);
      w.u32(rr.data.serial);
      w.u32(rr.data.refresh);
      w.u32(rr.data.retry);
      w.u32(rr.data.expire);
      w.u32(rr.data.minimum);
      return;
    case "SRV":
      w.u16(rr.data.priority);
      w.u16(rr.data.weight);
      w.u16(rr.data.port);
      w.name(rr.data.target, false);
      return;
    case "TXT":
      for (const s of rr.data) {
        if (s.length > 255) throw new EncodeError(`TXT string longer than 255 bytes for ${rr.name}`);
        w.u8(s.length);
        w.bytes(s);
      }
      return;
    default:
      w.bytes(rr.data);
  }
}

/** An IPv6 address as 16 bytes (a dotted IPv4 tail too); throws EncodeError, naming `owner`, when it is not one. */
export function ipv6Bytes(ip: string, owner = ""): Buffer {
  const out = Buffer.alloc(16);
  if (!writeIPv6(out, 0, ip, "sloppy")) throw badAddress("IPv6", ip, owner);
  return out;
}

function badAddress(family: string, ip: string, owner: string): EncodeError {
  return new EncodeError(`bad ${family} address ${JSON.stringify(ip)}${owner ? ` for ${owner}` : ""}`);
}
