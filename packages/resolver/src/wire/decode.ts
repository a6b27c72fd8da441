import { formatIPv6 } from "@switchyard/basics";
import { typeName } from "./constants.js";
import type { Edns, Header, Message, Question, ResourceRecord } from "./message.js";
import { labelsToName } from "./name.js";

export const HEADER_SIZE = 12;

/** Section counts from the header, before anything else is read. */
export interface Counts {
  qd: number;
  an: number;
  ns: number;
  ar: number;
}

/**
 * What came out of a packet. `unreadable`: not even a header (the server drops it, since any reply to
 * garbage can be used for amplification). `malformed`: the header parsed but the body did not; the
 * question is there if it parsed before the fault.
 */
export type Decoded =
  | { kind: "message"; message: Message; counts: Counts }
  | { kind: "malformed"; header: Header; counts: Counts; question?: Question; reason: string }
  | { kind: "unreadable"; reason: string };

class DecodeError extends Error {}

class Reader {
  offset = 0;
  constructor(readonly buf: Buffer) {}

  need(n: number, what: string): void {
    if (this.offset + n > this.buf.length) {
      throw new DecodeError(`${what} runs past the end of the packet at byte ${this.offset}`);
    }
  }
  u8(what: string): number {
    this.need(1, what);
    return this.buf.readUInt8(this.offset++);
  }
  u16(what: string): number {
    this.need(2, what);
    const v = this.buf.readUInt16BE(this.offset);
    this.offset += 2;
    return v;
  }
  u32(what: string): number {
    this.need(4, what);
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }
  bytes(n: number, what: string): Buffer {
    this.need(n, what);
    const b = Buffer.from(this.buf.subarray(this.offset, this.offset + n));
    this.offset += n;
    return b;
  }

  /** Reads a possibly compressed name; pointers must go strictly backwards, so loops are impossible. */
  name(what: string): string {
    const labels: Buffer[] = [];
    let pos = this.offset;
    let resumeAt = -1;
    let wireLength = 1;
    for (;;) {
      if (pos >= this.buf.length) throw new DecodeError(`${what} runs past the end of the packet`);
      const len = this.buf.readUInt8(pos);
      if (len === 0) {
        pos += 1;
        break;
      }
      if ((len & 0xc0) === 0xc0) {
        if (pos + 1 >= this.buf.length) throw new DecodeError(`${what} has a truncated pointer`);
        const target = ((len & 0x3f) << 8) | this.buf.readUInt8(pos + 1);
        if (target >= pos) throw new DecodeError(`${what} has a forward compression pointer at byte ${pos}`);
        if (resumeAt < 0) resumeAt = pos + 2;
        pos = target;
        continue;
      }
      if ((len & 0xc0) !== 0) throw new DecodeError(`${what} has a reserved label type at byte ${pos}`);
      if (pos + 1 + len > this.buf.length) throw new DecodeError(`${what} runs past the end of the packet`);
      wireLength += len + 1;
      if (wireLength > 255) throw new DecodeError(`${what} is longer than 255 bytes`);
      labels.push(Buffer.from(this.buf.subarray(pos + 1, pos + 1 + len)));
      pos += 1 + len;
    }
    this.offset = resumeAt >= 0 ? resumeAt : pos;
    return labelsToName(labels);
  }
}

export function readHeader(buf: Buffer): { header: Header; counts: Counts } | undefined {
  if (buf.length < HEADER_SIZE) return undefined;
  const flags = buf.readUInt16BE(2);
  return {
    header: {
      id: buf.readUInt16BE(0),
      qr: (flags & 0x8000) !== 0,
      opcode: (flags >> 11) & 0xf,
      aa: (flags & 0x400) !== 0,
      tc: (flags & 0x200) !== 0,
      rd: (flags & 0x100) !== 0,
      ra: (flags & 0x80) !== 0,
      z: (flags & 0x40) !== 0,
      ad: (flags & 0x20) !== 0,
      cd: (flags & 0x10) !== 0,
      rcode: flags & 0xf,
    },
    counts: {
      qd: buf.readUInt16BE(4),
      an: buf.readUInt16BE(6),
      ns: buf.readUInt16BE(8),
      ar: buf.readUInt16BE(10),
    },
  };
}

/** Decodes a whole message; never throws. */
export function decodeMessage(buf: Buffer): Decoded {
  const head = readHeader(buf);
  if (!head) return { kind: "unreadable", reason: `packet of ${buf.length} bytes is shorter than a header` };
  const { header, counts } = head;
  const r = new Reader(buf);
  r.offset = HEADER_SIZE;
  const question: Question[] = [];
  try {
    for (let i = 0; i < counts.qd; i++) {
      const name = r.name("question name");
      question.push({ name, type: r.u16("question type"), class: r.u16("question class") });
    }
    const answer = readSection(r, counts.an, "answer");
    const authority = readSection(r, counts.ns, "authority");
    const additional: ResourceRecord[] = [];
    let edns: Edns | undefined;
    let rcode = header.rcode;
    for (let i = 0; i < counts.ar; i++) {
      const rr = readRecord(r, "additional");
      if (rr.kind === "opt") {
        if (edns) throw new DecodeError("more than one OPT record");
        if (rr.owner !== ".") throw new DecodeError(`OPT record owned by ${rr.owner}, not the root`);
        edns = rr.edns;
        rcode |= rr.extendedRcode << 4;
      } else {
        additional.push(rr.record);
      }
    }
    const message: Message = { ...header, rcode, question, answer, authority, additional };
    if (edns) message.edns = edns;
    return { kind: "message", message, counts };
  } catch (err) {
    if (!(err instanceof DecodeError)) throw err;
    const out: Decoded = { kind: "malformed", header, counts, reason: err.message };
    if (question[0]) out.question = question[0];
    return out;
  }
}

function readSection(r: Reader, count: number, section: string): ResourceRecord[] {
  const out: ResourceRecord[] = [];
  for (let i = 0; i < count; i++) {
    const rr = readRecord(r, section);
    if (rr.kind === "opt") throw new DecodeError(`OPT record in the ${section} section`);
    out.push(rr.record);
  }
  return out;
}

type Read =
  | { kind: "record"; record: ResourceRecord }
  | { kind: "opt"; owner: string; edns: Edns; extendedRcode: number };

function readRecord(r: Reader, section: string): Read {
  const name = r.name(`${section} owner name`);
  const type = r.u16(`${section} type`);
  const cls = r.u16(`${section} class`);
  const ttl = r.u32(`${section} TTL`);
  const rdlength = r.u16(`${section} rdlength`);
  r.need(rdlength, `${section} rdata of ${name}`);
  const end = r.offset + rdlength;
  if (type === 41) {
    const options = [];
    while (r.offset < end) {
      const code = r.u16("EDNS option code");
      const len = r.u16("EDNS option length");
      if (r.offset + len > end) throw new DecodeError("EDNS option runs past its OPT record");
      options.push({ code, data: r.bytes(len, "EDNS option") });
    }
    return {
      kind: "opt",
      owner: name,
      extendedRcode: ttl >>> 24,
      edns: { udpSize: cls, version: (ttl >>> 16) & 0xff, dnssecOk: (ttl & 0x8000) !== 0, options },
    };
  }
  const record = readRdata(r, { name, cls, ttl, type, rdlength, end });
  if (r.offset !== end) {
    throw new DecodeError(
      `${section} rdata of ${name} ${typeName(type)} does not match its rdlength ${rdlength}`,
    );
  }
  return { kind: "record", record };
}

function readRdata(
  r: Reader,
  f: { name: string; cls: number; ttl: number; type: number; rdlength: number; end: number },
): ResourceRecord {
  const base = { name: f.name, class: f.cls, ttl: f.ttl };
  const what = `rdata of ${f.name}`;
  switch (f.type) {
    case 1:
      if (f.rdlength !== 4) throw new DecodeError(`A ${what} is ${f.rdlength} bytes, not 4`);
      return { ...base, type: "A", data: [...r.bytes(4, what)].join(".") };
    case 28:
      if (f.rdlength !== 16) throw new DecodeError(`AAAA ${what} is ${f.rdlength} bytes, not 16`);
      return { ...base, type: "AAAA", data: formatIPv6(r.bytes(16, what)) };
    case 2:
      return { ...base, type: "NS", data: r.name(what) };
    case 5:
      return { ...base, type: "CNAME", data: r.name(what) };
    case 12:
      return { ...base, type: "PTR", data: r.name(what) };
    case 39:
      return { ...base, type: "DNAME", data: r.name(what) };
    case 15:
      return { ...base, type: "MX", data: { preference: r.u16(what), exchange: r.name(what) } };
    case 33:
      return {
        ...base,
        type: "SRV",
        data: { priority: r.u16(what), weight: r.u16(what), port: r.u16(what), target: r.name(what) },
      };
    case 6:
      return {
        ...base,
        type: "SOA",
        data: {
          mname: r.name(what),
          rname: r.name(what),
          serial: r.u32(what),
          refresh: r.u32(what),
          retry: r.u32(what),
          expire: r.u32(what),
          minimum: r.u32(what),
        },
      };
    case 16: {
      const strings: Buffer[] = [];
      while (r.offset < f.end) strings.push(r.bytes(r.u8(what), what));
      return { ...base, type: "TXT", data: strings };
    }
    default:
      return { ...base, type: `TYPE${f.type}`, data: r.bytes(f.rdlength, what) };
  }
}
