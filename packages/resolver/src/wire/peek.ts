/**
 * The few facts a cache hit needs, read straight from a query's bytes without decoding it. Only the
 * plainest queries qualify: QUERY opcode, one IN question whose name has no pointers and only bytes that
 * print as themselves, and at most an option-less version-0 OPT record ending the packet. Anything else
 * gets undefined and goes the full way (decode, checks, plugin chain), which answers it the same way
 * these fields would.
 */
export interface PeekedQuery {
  readonly packet: Buffer;
  readonly id: number;
  /** Header flags as sent. */
  readonly flags: number;
  /** The name lower-cased in presentation format, as `lowerName(decoded name)` would give it. */
  readonly name: string;
  /** Where the question name ends (its type follows). */
  readonly nameEnd: number;
  readonly qtype: number;
  readonly qclass: number;
  /** The client's EDNS buffer size; undefined when the query has no OPT record. */
  readonly udpSize: number | undefined;
  readonly dnssecOk: boolean;
}

const HEADER = 12;
/** A name of at most 255 wire bytes spells in at most 254 characters. */
const SPELLING = Buffer.alloc(256);
const OPT_SIZE = 11;

/** Bytes a label may hold here: printable ASCII apart from those presentation format escapes. */
const PLAIN = new Uint8Array(256);
for (let b = 0x21; b <= 0x7e; b++) PLAIN[b] = 1;
for (const c of '.\\"();@') PLAIN[c.charCodeAt(0)] = 0;

export function peekQuery(packet: Buffer): PeekedQuery | undefined {
  const length = packet.length;
  if (length < HEADER + 5) return undefined;
  const flags = (packet[2] as number) * 256 + (packet[3] as number);
  // QR=0, opcode QUERY; qdcount 1, an/ns 0, ar 0 or 1.
  if ((flags & 0xf800) !== 0) return undefined;
  if (packet.readUInt16BE(4) !== 1 || packet.readUInt32BE(6) !== 0) return undefined;
  const arcount = packet.readUInt16BE(10);
  if (arcount > 1) return undefined;
  // The name is spelled into a scratch buffer and read out as one string.
  let pos = HEADER;
  let spelled = 0;
  for (;;) {
    const len = packet[pos] as number;
    if (len === 0) break;
    if (len > 63 || pos + 1 + len >= length) return undefined;
    for (let i = pos + 1; i <= pos + len; i++) {
      let b = packet[i] as number;
      if (PLAIN[b] === 0) return undefined;
      if (b >= 0x41 && b <= 0x5a) b += 0x20;
      SPELLING[spelled++] = b;
    }
    SPELLING[spelled++] = 0x2e;
    pos += 1 + len;
    if (pos - HEADER > 254) return undefined;
  }
  const nameEnd = pos + 1;
  const name = spelled === 0 ? "." : SPELLING.toString("latin1", 0, spelled);
  if (nameEnd + 4 > length) return undefined;
  const qtype = packet.readUInt16BE(nameEnd);
  const qclass = packet.readUInt16BE(nameEnd + 2);
  if (qclass !== 1) return undefined;
  const questionEnd = nameEnd + 4;
  const base = { packet, id: packet.readUInt16BE(0), flags, name, nameEnd, qtype, qclass };
  if (arcount === 0) {
    return questionEnd === length ? { ...base, udpSize: undefined, dnssecOk: false } : undefined;
  }
  // The OPT record: root owner, type 41, version 0, no extended rcode, no options, nothing after it.
  if (questionEnd + OPT_SIZE !== length) return undefined;
  if (packet[questionEnd] !== 0 || packet.readUInt16BE(questionEnd + 1) !== 41) return undefined;
  if (packet[questionEnd + 5] !== 0 || packet[questionEnd + 6] !== 0) return undefined;
  if (packet.readUInt16BE(questionEnd + 9) !== 0) return undefined;
  const udpSize = packet.readUInt16BE(questionEnd + 3);
  const dnssecOk = ((packet[questionEnd + 7] as number) & 0x80) !== 0;
  return { ...base, udpSize, dnssecOk };
}

/** The OPT record CoreDNS puts on a reply to a query that had one (no options echoed: there were none). */
export function writeReplyOpt(out: Buffer, at: number, q: PeekedQuery): void {
  out[at] = 0;
  out.writeUInt16BE(41, at + 1);
  out.writeUInt16BE(q.udpSize ?? 0, at + 3);
  out.writeUInt32BE(q.dnssecOk ? 0x8000 : 0, at + 5);
  out.writeUInt16BE(0, at + 9);
}

export const REPLY_OPT_SIZE = OPT_SIZE;
