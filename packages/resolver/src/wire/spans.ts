/**
 * Where each record of an encoded message sits, for the plugins that rewrite replies kept as bytes
 * without decoding them. Names are skipped, never followed, so this reads any well-formed message.
 */
export interface RecordSpan {
  /** The first byte of the owner name. */
  start: number;
  type: number;
  /** The TTL's offset (class before it, rdata length after). */
  ttl: number;
  /** The first byte of the rdata, and the first byte after it. */
  rdata: number;
  end: number;
}

function skipName(wire: Buffer, at: number, end: number): number {
  let pos = at;
  while (pos < end) {
    const len = wire[pos] as number;
    if (len === 0) return pos + 1;
    if ((len & 0xc0) === 0xc0) return pos + 2 <= end ? pos + 2 : -1;
    pos += 1 + len;
  }
  return -1;
}

/**
 * The records of the answer, authority and additional sections of the first `end` bytes of `wire`, or
 * undefined when those bytes are not exactly a message with the counts its header gives.
 */
export function recordSpans(
  wire: Buffer,
  end: number,
): [RecordSpan[], RecordSpan[], RecordSpan[]] | undefined {
  if (end < 12 || end > wire.length) return undefined;
  let pos = 12;
  for (let i = wire.readUInt16BE(4); i > 0; i--) {
    pos = skipName(wire, pos, end);
    if (pos < 0 || pos + 4 > end) return undefined;
    pos += 4;
  }
  const out: RecordSpan[][] = [];
  for (const at of [6, 8, 10]) {
    const spans: RecordSpan[] = [];
    for (let i = wire.readUInt16BE(at); i > 0; i--) {
      const start = pos;
      pos = skipName(wire, pos, end);
      if (pos < 0 || pos + 10 > end) return undefined;
      const type = wire.readUInt16BE(pos);
      const rdata = pos + 10;
      pos = rdata + wire.readUInt16BE(pos + 8);
      if (pos > end) return undefined;
      spans.push({ start, type, ttl: rdata - 6, rdata, end: pos });
    }
    out.push(spans);
  }
  if (pos !== end) return undefined;
  return out as [RecordSpan[], RecordSpan[], RecordSpan[]];
}
