import type { ResponseKind } from "../../plugin/pkg/response.js";
import { encodeMessage, ownedCopy } from "../../wire/encode.js";
import type { Message, ResourceRecord } from "../../wire/message.js";
import { lowerName, nameToLabels } from "../../wire/name.js";
import type { PeekedQuery } from "../../wire/peek.js";

/**
 * A stored reply. It keeps the message and its encoding; a hit copies the bytes and patches the ID, the
 * flags, every TTL and the question's spelling, so the reply is never encoded again. The encoding has
 * no pointers into the question, so patching its case leaves the records as first stored (CoreDNS
 * answers with the owner names of the query that filled the cache).
 */
export interface Entry {
  readonly kind: ResponseKind;
  readonly name: string;
  readonly lowerName: string;
  readonly qtype: number;
  readonly qclass: number;
  readonly message: Message;
  readonly wire: Buffer;
  readonly ttlOffsets: readonly number[];
  /** The TTL the entry was stored with, in seconds. */
  readonly origTtl: number;
  /** Epoch milliseconds when stored. */
  readonly stored: number;
  /** Prefetch bookkeeping: hits with no gap longer than the prefetch duration. */
  hits: number;
  lastHit: number;
  refreshing: boolean;
}

/** Builds an entry from a reply whose records already carry `ttl`. */
export function newEntry(reply: Message, kind: ResponseKind, ttl: number, now: number): Entry {
  const q = reply.question[0];
  const message: Message = { ...reply, question: reply.question.map((x) => ({ ...x })) };
  delete message.edns;
  // Its own memory: entries live for their TTL, and a pool slice would keep a whole slab alive with them.
  const wire = ownedCopy(encodeMessage(message, { pointIntoQuestion: false }));
  return {
    kind,
    name: q?.name ?? ".",
    lowerName: lowerName(q?.name ?? "."),
    qtype: q?.type ?? 0,
    qclass: q?.class ?? 1,
    message,
    wire,
    ttlOffsets: ttlOffsets(wire),
    origTtl: ttl,
    stored: now,
    hits: 0,
    lastHit: now,
    refreshing: false,
  };
}

/** Seconds left; zero or negative once expired (serve_stale may still use it). */
export function remaining(e: Entry, now: number): number {
  return e.origTtl - Math.trunc((now - e.stored) / 1000);
}

/**
 * The reply to `request` from this entry, with every TTL set to `ttl`: AA set (old glibc wants it), RD,
 * CD, opcode and question from the request, AD only when the client asked for DNSSEC data.
 */
export function replyFromEntry(
  e: Entry,
  request: Message,
  ttl: number,
  showAd: boolean,
): { message: Message; wire: Buffer } {
  const retime = (rrs: readonly ResourceRecord[]) => rrs.map((rr) => ({ ...rr, ttl }));
  const ad = e.message.ad && showAd;
  const message: Message = {
    ...e.message,
    id: request.id,
    opcode: request.opcode,
    rd: request.rd,
    cd: request.cd,
    aa: true,
    tc: false,
    z: false,
    ad,
    question: request.question.map((q) => ({ ...q })),
    answer: retime(e.message.answer),
    authority: retime(e.message.authority),
    additional: retime(e.message.additional),
  };
  const wire = Buffer.from(e.wire);
  wire.writeUInt16BE(request.id, 0);
  wire.writeUInt16BE(
    0x8000 |
      ((request.opcode & 0xf) << 11) |
      0x400 |
      (request.rd ? 0x100 : 0) |
      (message.ra ? 0x80 : 0) |
      (ad ? 0x20 : 0) |
      (request.cd ? 0x10 : 0) |
      (message.rcode & 0xf),
    2,
  );
  const q = request.question[0];
  if (q) writeName(wire, 12, q.name);
  for (const at of e.ttlOffsets) wire.writeUInt32BE(ttl >>> 0, at);
  return { message, wire };
}

/**
 * The same reply as `replyFromEntry`, built from a query that was only peeked at: the stored bytes with
 * the query's ID, flags and question spelling (its bytes copied as sent) and `ttl` everywhere, and
 * `reserve` spare bytes at the end.
 */
export function wireReplyFromEntry(e: Entry, q: PeekedQuery, ttl: number, reserve: number): Buffer {
  const stored = e.wire;
  const wire = Buffer.allocUnsafe(stored.length + reserve);
  stored.copy(wire, 0);
  const rd = q.flags & 0x100;
  const cd = q.flags & 0x10;
  const ad = e.message.ad && (q.dnssecOk || (q.flags & 0x20) !== 0);
  wire.writeUInt16BE(q.id, 0);
  wire.writeUInt16BE(
    0x8000 | 0x400 | rd | (e.message.ra ? 0x80 : 0) | (ad ? 0x20 : 0) | cd | (e.message.rcode & 0xf),
    2,
  );
  q.packet.copy(wire, 12, 12, q.nameEnd);
  const offsets = e.ttlOffsets;
  for (let i = 0; i < offsets.length; i++) wire.writeUInt32BE(ttl >>> 0, offsets[i] as number);
  return wire;
}

/** Overwrites a name written without pointers at `at` with another spelling of the same name. */
function writeName(wire: Buffer, at: number, name: string): void {
  let pos = at;
  for (const label of nameToLabels(name)) {
    wire.writeUInt8(label.length, pos);
    label.copy(wire, pos + 1);
    pos += 1 + label.length;
  }
}

/** Where the TTL of each record sits in an encoded message (the OPT record excluded). */
export function ttlOffsets(wire: Buffer): number[] {
  const qd = wire.readUInt16BE(4);
  const rrs = wire.readUInt16BE(6) + wire.readUInt16BE(8) + wire.readUInt16BE(10);
  let pos = 12;
  for (let i = 0; i < qd; i++) pos = skipName(wire, pos) + 4;
  const out: number[] = [];
  for (let i = 0; i < rrs; i++) {
    pos = skipName(wire, pos);
    const type = wire.readUInt16BE(pos);
    if (type !== 41) out.push(pos + 4);
    pos += 10 + wire.readUInt16BE(pos + 8);
  }
  return out;
}

function skipName(wire: Buffer, at: number): number {
  let pos = at;
  for (;;) {
    const len = wire.readUInt8(pos);
    if (len === 0) return pos + 1;
    if ((len & 0xc0) === 0xc0) return pos + 2;
    pos += 1 + len;
  }
}
