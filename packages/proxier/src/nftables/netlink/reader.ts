// Reads netlink messages and their attributes: what the kernel answers to a batch (errors) and to
// a dump (one message per object).
import { NLA_F_NESTED, NLMSG_DONE, NLMSG_ERROR } from "./constants.js";

export interface NetlinkMessage {
  readonly type: number;
  readonly flags: number;
  readonly seq: number;
  /** After the 16-byte header. */
  readonly payload: Buffer;
}

/** Splits a receive buffer into messages. */
export function parseMessages(buf: Buffer): NetlinkMessage[] {
  const out: NetlinkMessage[] = [];
  let at = 0;
  while (at + 16 <= buf.length) {
    const len = buf.readUInt32LE(at);
    if (len < 16 || at + len > buf.length) break;
    out.push({
      type: buf.readUInt16LE(at + 4),
      flags: buf.readUInt16LE(at + 6),
      seq: buf.readUInt32LE(at + 8),
      payload: buf.subarray(at + 16, at + len),
    });
    at += (len + 3) & ~3;
  }
  return out;
}

export const isError = (m: NetlinkMessage) => m.type === NLMSG_ERROR;
export const isDone = (m: NetlinkMessage) => m.type === NLMSG_DONE;

/** An NLMSG_ERROR's errno (positive; 0 is an acknowledgement) and the sequence number it answers. */
export function errorOf(m: NetlinkMessage): { errno: number; seq: number } {
  const code = m.payload.readInt32LE(0);
  // The original request's header follows: its sequence number names the failed message.
  const seq = m.payload.length >= 4 + 16 ? m.payload.readUInt32LE(4 + 8) : m.seq;
  return { errno: -code, seq };
}

export interface Attribute {
  readonly type: number;
  readonly nested: boolean;
  readonly value: Buffer;
}

/** The attributes in `buf` (an nf_tables payload: pass `skip` 4 to step over nfgenmsg). */
export function parseAttributes(buf: Buffer, skip = 0): Attribute[] {
  const out: Attribute[] = [];
  let at = skip;
  while (at + 4 <= buf.length) {
    const len = buf.readUInt16LE(at);
    const rawType = buf.readUInt16LE(at + 2);
    if (len < 4 || at + len > buf.length) break;
    out.push({
      type: rawType & ~(NLA_F_NESTED | 0x4000),
      nested: (rawType & NLA_F_NESTED) !== 0,
      value: buf.subarray(at + 4, at + len),
    });
    at += (len + 3) & ~3;
  }
  return out;
}

/** The first attribute of a type, or undefined. */
export function attr(attrs: readonly Attribute[], type: number): Attribute | undefined {
  return attrs.find((a) => a.type === type);
}

/** A NUL-terminated string attribute's text. */
export function attrString(a: Attribute | undefined): string | undefined {
  if (!a) return undefined;
  const end = a.value.indexOf(0);
  return a.value.toString("utf8", 0, end < 0 ? a.value.length : end);
}
