/**
 * An encoded message checked the way `decodeMessage` reads it, without building it: forward relays an
 * upstream's reply as bytes when the reply is one `decodeMessage` would accept, so the client gets it
 * exactly when the full path would. Only what a relay needs comes back.
 */
export interface ScannedMessage {
  /** The rcode, with the OPT record's extended bits above the header's four. */
  rcode: number;
  qr: boolean;
  tc: boolean;
  /** Where the OPT record starts, or -1 without one. */
  opt: number;
}

const HEADER = 12;
const MAX_NAME = 255;

/**
 * Where the name at `at` ends (the byte after it, or after its first pointer), or -1 where `decodeMessage`
 * would fail on it: past the end, a pointer that does not go strictly backwards, a reserved label type,
 * more than 255 bytes in all.
 */
function nameEnd(wire: Buffer, at: number): number {
  let pos = at;
  let resumeAt = -1;
  let length = 1;
  for (;;) {
    if (pos >= wire.length) return -1;
    const len = wire[pos] as number;
    if (len === 0) return resumeAt >= 0 ? resumeAt : pos + 1;
    if ((len & 0xc0) === 0xc0) {
      if (pos + 1 >= wire.length) return -1;
      const target = ((len & 0x3f) << 8) | (wire[pos + 1] as number);
      if (target >= pos) return -1;
      if (resumeAt < 0) resumeAt = pos + 2;
      pos = target;
      continue;
    }
    if ((len & 0xc0) !== 0 || pos + 1 + len > wire.length) return -1;
    length += len + 1;
    if (length > MAX_NAME) return -1;
    pos += 1 + len;
  }
}

/** Names at the start of rdata, by type: NS, CNAME, PTR, DNAME one; MX after 2 bytes; SRV after 6; SOA two. */
function rdataFits(wire: Buffer, type: number, start: number, end: number): boolean {
  switch (type) {
    case 1:
      return end - start === 4;
    case 28:
      return end - start === 16;
    case 2:
    case 5:
    case 12:
    case 39:
      return nameEnd(wire, start) === end;
    case 15:
      return start + 2 <= end && nameEnd(wire, start + 2) === end;
    case 33:
      return start + 6 <= end && nameEnd(wire, start + 6) === end;
    case 6: {
      const second = nameEnd(wire, start);
      const fixed = second < 0 ? -1 : nameEnd(wire, second);
      return fixed >= 0 && fixed + 20 === end;
    }
    case 16: {
      let pos = start;
      while (pos < end) pos += 1 + (wire[pos] as number);
      return pos === end;
    }
    default:
      return true;
  }
}

/** Whether the OPT rdata at [start, end) is a run of whole options. */
function optionsFit(wire: Buffer, start: number, end: number): boolean {
  let pos = start;
  while (pos < end) {
    if (pos + 4 > end) return false;
    pos += 4 + wire.readUInt16BE(pos + 2);
  }
  return pos === end;
}

/** Whether the (already checked) name at `at` is the root, directly or through pointers. */
function isRoot(wire: Buffer, at: number): boolean {
  let pos = at;
  while (((wire[pos] as number) & 0xc0) === 0xc0)
    pos = (((wire[pos] as number) & 0x3f) << 8) | (wire[pos + 1] as number);
  return wire[pos] === 0;
}

/** The record at `at`: where it ends, or -1; an OPT record's start goes to `found.opt`. */
function scanRecord(wire: Buffer, at: number, additional: boolean, found: ScannedMessage): number {
  const owner = nameEnd(wire, at);
  if (owner < 0 || owner + 10 > wire.length) return -1;
  const type = wire.readUInt16BE(owner);
  const start = owner + 10;
  const end = start + wire.readUInt16BE(owner + 8);
  if (end > wire.length) return -1;
  if (type === 41) {
    // Only one, in the additional section, owned by the root.
    if (!additional || found.opt >= 0 || !isRoot(wire, at) || !optionsFit(wire, start, end)) return -1;
    found.opt = at;
    found.rcode |= (wire[owner + 4] as number) << 4;
    return end;
  }
  return rdataFits(wire, type, start, end) ? end : -1;
}

/** The facts of a message `decodeMessage` would read, or undefined where it would not. */
export function scanMessage(wire: Buffer): ScannedMessage | undefined {
  if (wire.length < HEADER) return undefined;
  const flags = wire.readUInt16BE(2);
  const found: ScannedMessage = {
    rcode: flags & 0xf,
    qr: (flags & 0x8000) !== 0,
    tc: (flags & 0x200) !== 0,
    opt: -1,
  };
  let pos = HEADER;
  for (let i = wire.readUInt16BE(4); i > 0; i--) {
    pos = nameEnd(wire, pos);
    if (pos < 0 || pos + 4 > wire.length) return undefined;
    pos += 4;
  }
  const records = wire.readUInt16BE(6) + wire.readUInt16BE(8);
  const additional = wire.readUInt16BE(10);
  for (let i = 0; i < records + additional; i++) {
    pos = scanRecord(wire, pos, i >= records, found);
    if (pos < 0) return undefined;
  }
  return found;
}

/**
 * Whether the first question of `reply` is `query`'s, name compared without regard to ASCII case, as
 * forward's check of a reply compares decoded questions. `query` holds a plain question (see peekQuery):
 * its name is labels without pointers, ending at `queryNameEnd`.
 */
export function sameQuestion(reply: Buffer, query: Buffer, queryNameEnd: number): boolean {
  if (reply.length < HEADER || reply.readUInt16BE(4) === 0) return false;
  let r = HEADER;
  let q = HEADER;
  // The first name of a message cannot point backwards into anything but the header: labels only.
  while (q < queryNameEnd) {
    const len = query[q] as number;
    if (reply[r] !== len || r + 1 + len > reply.length) return false;
    for (let i = 1; i <= len; i++) {
      let a = reply[r + i] as number;
      let b = query[q + i] as number;
      if (a >= 0x41 && a <= 0x5a) a += 0x20;
      if (b >= 0x41 && b <= 0x5a) b += 0x20;
      if (a !== b) return false;
    }
    r += 1 + len;
    q += 1 + len;
  }
  return r + 4 <= reply.length && reply.readUInt32BE(r) === query.readUInt32BE(q);
}
