import { formatIPv6, isIPv4Mapped, parseGoIP } from "@switchyard/basics";
import { classByName, typeByName } from "../../plugin/pkg/mnemonics.js";
import type { ResourceRecord } from "../../wire/message.js";
import { nameToLabels } from "../../wire/name.js";
import type { ZoneField } from "./zone-lex.js";
import { RecordError, zoneFields } from "./zone-lex.js";

/** miekg's TTL when a record names none. */
const DEFAULT_TTL = 3600;

/** The types whose rdata is read from text here; any type may still be written RFC 3597 style (`\# 4 0a000001`). */
export const TEXT_TYPES = new Set(["A", "AAAA", "CNAME", "PTR", "NS", "DNAME", "MX", "SRV", "SOA", "TXT"]);

interface Head {
  owner: string;
  ttl: number;
  cls: number;
  type: string;
  typeNum: number;
}

/**
 * miekg's dns.NewRR for one templated record: owner, then TTL and class in either order (both optional),
 * the type, and its rdata. Relative names are taken relative to the root, as NewRR does. Returns undefined
 * for text that holds no record at all.
 */
export function parseTemplatedRR(text: string): ResourceRecord | undefined {
  const { fields, blankStart } = zoneFields(text);
  if (fields.length === 0) return undefined;
  if (blankStart) throw new RecordError("dns: no previous owner name for a record starting with a blank");
  const [first, ...rest] = fields as [ZoneField, ...ZoneField[]];
  const head = readHead(absolute(first), rest);
  const rdata = rest.slice(rest.findIndex((f) => f.text.toUpperCase() === head.type) + 1);
  return buildRecord(head, rdata);
}

function readHead(owner: string, fields: readonly ZoneField[]): Head {
  let ttl: number | undefined;
  let cls: number | undefined;
  for (const f of fields) {
    const upper = f.text.toUpperCase();
    const typeNum = typeOf(upper);
    if (!f.quoted && typeNum !== undefined)
      return { owner, ttl: ttl ?? DEFAULT_TTL, cls: cls ?? 1, type: upper, typeNum };
    const c = f.quoted ? undefined : classOf(upper);
    if (c !== undefined && cls === undefined) {
      cls = c;
      continue;
    }
    const t = f.quoted || ttl !== undefined ? undefined : stringToTTL(f.text);
    if (t === undefined)
      throw new RecordError(
        `dns: expecting RR type, TTL or class, not this...: ${JSON.stringify(f.text)} at line: 1:${f.col}`,
      );
    ttl = t;
  }
  throw new RecordError(`dns: not a TTL: ${JSON.stringify(owner)} at line: 1:${owner.length + 1}`);
}

function typeOf(upper: string): number | undefined {
  const m = /^TYPE(\d{1,5})$/.exec(upper);
  if (m) return Number(m[1]) <= 0xffff ? Number(m[1]) : undefined;
  // The table's mixed-case "None" and "Reserved" are never types in zone text, and upper case misses them.
  return typeByName(upper);
}

function classOf(upper: string): number | undefined {
  const m = /^CLASS(\d{1,5})$/.exec(upper);
  if (m) return Number(m[1]) <= 0xffff ? Number(m[1]) : undefined;
  return classByName(upper);
}

/** miekg's stringToTTL: digits with optional s/m/h/d/w units, summed, wrapping at 32 bits. */
export function stringToTTL(text: string): number | undefined {
  let total = 0;
  let n = 0;
  const unit: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86400, w: 604800 };
  for (const c of text.toLowerCase()) {
    if (c >= "0" && c <= "9") n = (n * 10 + Number(c)) >>> 0;
    else if (unit[c] !== undefined) {
      total = (total + n * unit[c]) >>> 0;
      n = 0;
    } else return undefined;
  }
  return text === "" ? undefined : (total + n) >>> 0;
}

/** A domain name field made absolute: `@` is the root (NewRR's origin), anything relative gains the dot. */
function absolute(f: ZoneField | undefined): string {
  if (!f || f.quoted) throw new RecordError(`dns: bad domain name${f ? `: ${JSON.stringify(f.text)}` : ""}`);
  const name = f.text === "@" ? "." : f.text.endsWith(".") && !f.text.endsWith("\\.") ? f.text : `${f.text}.`;
  try {
    nameToLabels(name);
  } catch {
    throw new RecordError(`dns: bad domain name: ${JSON.stringify(f.text)} at line: 1:${f.col}`);
  }
  return name;
}

function uint(f: ZoneField | undefined, bits: 16 | 32, what: string): number {
  if (!f || f.quoted || !/^\d+$/.test(f.text) || BigInt(f.text) >= 1n << BigInt(bits))
    throw new RecordError(`dns: bad ${what}${f ? `: ${JSON.stringify(f.text)}` : ""}`);
  return Number(f.text);
}

/** SOA timers take TTL spellings too (`1h`). */
function timer(f: ZoneField | undefined, what: string): number {
  const t = f && !f.quoted ? stringToTTL(f.text) : undefined;
  if (t === undefined) throw new RecordError(`dns: bad SOA ${what}${f ? `: ${JSON.stringify(f.text)}` : ""}`);
  return t;
}

function buildRecord(head: Head, rdata: readonly ZoneField[]): ResourceRecord {
  const base = { name: head.owner, class: head.cls, ttl: head.ttl };
  const opaque = (data: Buffer): ResourceRecord => ({ ...base, type: `TYPE${head.typeNum}`, data });
  if (rdata[0]?.text === "\\#" && !rdata[0].quoted) return opaque(genericRdata(rdata.slice(1)));
  // miekg's "dynamic update" form: a type with no rdata at all is a record with empty rdata.
  if (rdata.length === 0) return opaque(Buffer.alloc(0));
  if (!TEXT_TYPES.has(head.type))
    throw new RecordError(`dns: RR type ${head.type} is not supported by this implementation`);
  if (head.type === "TXT") return { ...base, type: "TXT", data: rdata.flatMap((f) => txtStrings(f.text)) };
  const [a, b, c, d, e, f, g, extra] = rdata;
  const check = (count: number) => {
    const garbage = rdata[count];
    if (garbage)
      throw new RecordError(
        `dns: garbage after rdata: ${JSON.stringify(garbage.text)} at line: 1:${garbage.col}`,
      );
  };
  switch (head.type) {
    case "A":
    case "AAAA": {
      check(1);
      return { ...base, type: head.type, data: address(a as ZoneField, head.type) };
    }
    case "MX":
      check(2);
      return { ...base, type: "MX", data: { preference: uint(a, 16, "MX Pref"), exchange: absolute(b) } };
    case "SRV":
      check(4);
      return {
        ...base,
        type: "SRV",
        data: {
          priority: uint(a, 16, "SRV Priority"),
          weight: uint(b, 16, "SRV Weight"),
          port: uint(c, 16, "SRV Port"),
          target: absolute(d),
        },
      };
    case "SOA":
      if (extra) check(7);
      return {
        ...base,
        type: "SOA",
        data: {
          mname: absolute(a),
          rname: absolute(b),
          serial: uint(c, 32, "SOA zone parameter"),
          refresh: timer(d, "zone parameter"),
          retry: timer(e, "zone parameter"),
          expire: timer(f, "zone parameter"),
          minimum: timer(g, "zone parameter"),
        },
      };
    default:
      check(1);
      return { ...base, type: head.type as "CNAME" | "PTR" | "NS" | "DNAME", data: absolute(a) };
  }
}

/** A as a dotted quad without `:`, AAAA with one; miekg refuses either written as the other. */
function address(f: ZoneField, type: "A" | "AAAA"): string {
  const ip = f.quoted ? undefined : parseGoIP(f.text);
  const colon = f.text.includes(":");
  if (!ip || (type === "A") === colon)
    throw new RecordError(`dns: bad ${type} ${type}: ${JSON.stringify(f.text)} at line: 1:${f.col}`);
  return type === "A" && isIPv4Mapped(ip) ? [...ip.subarray(12)].join(".") : formatIPv6(ip);
}

/** `\# LENGTH HEX...` (RFC 3597): the hex may be split over fields and must match the length. */
function genericRdata(fields: readonly ZoneField[]): Buffer {
  const [length, ...hex] = fields;
  const n = length && /^\d+$/.test(length.text) ? Number(length.text) : Number.NaN;
  const digits = hex.map((f) => f.text).join("");
  if (Number.isNaN(n) || n > 0xffff || !/^([0-9a-fA-F]{2})*$/.test(digits) || digits.length !== n * 2)
    throw new RecordError("dns: bad RFC 3597 rdata");
  return Buffer.from(digits, "hex");
}

/** A TXT field's bytes (`\"`, `\\`, `\DDD` unescaped), cut into 255-byte character-strings as miekg does. */
function txtStrings(text: string): Buffer[] {
  const bytes: number[] = [];
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string;
    if (c === "\\" && /^\d{3}$/.test(text.slice(i + 1, i + 4))) {
      bytes.push(Number(text.slice(i + 1, i + 4)) & 0xff);
      i += 3;
    } else if (c === "\\" && i + 1 < text.length) {
      bytes.push(...Buffer.from(text[++i] as string, "utf8"));
    } else {
      bytes.push(...Buffer.from(c, "utf8"));
    }
  }
  const out: Buffer[] = [];
  for (let i = 0; i < bytes.length; i += 255) out.push(Buffer.from(bytes.slice(i, i + 255)));
  return out.length > 0 ? out : [Buffer.alloc(0)];
}
