import { decodeMessage } from "../../wire/decode.js";
import { encodeMessage } from "../../wire/encode.js";
import type { Message } from "../../wire/message.js";
import { type RecordSpan, recordSpans } from "../../wire/spans.js";
import type { RandomIndex } from "./shuffle.js";
import { roundRobin } from "./shuffle.js";

const CNAME = 5;
const A = 1;
const AAAA = 28;
const MX = 15;

/** round_robin's rank of a type: CNAMEs first, then other types, then addresses, then MX. */
function rank(type: number): number {
  if (type === CNAME) return 0;
  if (type === A || type === AAAA) return 2;
  if (type === MX) return 3;
  return 1;
}

/**
 * Whether the address records of a section can be shuffled by moving their rdata alone: they follow the
 * ranks already, there is at most one MX, and every address record has the same bytes before its rdata
 * (one owner, given as a pointer, one type, class, TTL and rdata length). Moving the rdata is then the
 * same as moving the records, and no name in the message points into what moves.
 */
function inPlace(wire: Buffer, spans: readonly RecordSpan[]): boolean {
  let last = 0;
  let mx = 0;
  let first: RecordSpan | undefined;
  for (const s of spans) {
    const r = rank(s.type);
    if (r < last) return false;
    last = r;
    if (s.type === MX && ++mx > 1) return false;
    if (r !== 2) continue;
    if (!first) {
      if (((wire[s.start] as number) & 0xc0) !== 0xc0) return false;
      first = s;
    } else if (wire.compare(wire, first.start, first.rdata, s.start, s.rdata) !== 0) return false;
  }
  return true;
}

/**
 * The encoded reply (its first `end` bytes; anything after is spare room) with the order `roundRobin` gives
 * each section, drawing the same random numbers in the same order. A reply already in that order is
 * returned as it is; address records that differ only in their rdata are shuffled in place; anything else
 * is decoded, reordered and encoded again, and comes back undefined when the new encoding no longer fits
 * in `end` bytes (the caller then sends the reply in the order it had).
 */
export function roundRobinWire(wire: Buffer, end: number, random: RandomIndex): Buffer | undefined {
  const all = recordSpans(wire, end);
  if (!all) return undefined;
  if (all.every((spans) => inPlace(wire, spans))) {
    for (const spans of all) {
      const addresses = spans.filter((s) => rank(s.type) === 2);
      if (addresses.length < 2) continue;
      const rdata: Buffer[] = addresses.map((s) => Buffer.from(wire.subarray(s.rdata, s.end)));
      for (let i = rdata.length - 1; i > 0; i--) {
        const j = random(i + 1);
        [rdata[i], rdata[j]] = [rdata[j] as Buffer, rdata[i] as Buffer];
      }
      for (const [i, s] of addresses.entries()) (rdata[i] as Buffer).copy(wire, s.rdata);
    }
    return wire;
  }
  const decoded = decodeMessage(wire.subarray(0, end));
  if (decoded.kind !== "message") return undefined;
  const msg = decoded.message;
  const shuffled: Message = {
    ...msg,
    answer: roundRobin(msg.answer, random),
    authority: roundRobin(msg.authority, random),
    additional: roundRobin(msg.additional, random),
  };
  let encoded: Buffer;
  try {
    encoded = encodeMessage(shuffled);
  } catch {
    return undefined;
  }
  if (encoded.length > end) return undefined;
  const out = Buffer.allocUnsafe(encoded.length + (wire.length - end));
  encoded.copy(out, 0);
  return out;
}
