import { recordSpans } from "../../wire/spans.js";
import type { CacheOptions } from "./options.js";

const OPT = 41;
const SOA = 6;
const NS = 2;

/**
 * What serveDNS's writer does to a reply it passes on without storing it, done on the encoded reply (its
 * first `end` bytes) in place: every record gets the entry TTL (the smallest TTL in the reply, kept within
 * the success or denial bounds), and AD is cleared unless the client asked for DNSSEC data (`showAd`).
 * Only plain answers are handled: NOERROR with records and no SOA, NODATA and NXDOMAIN. For anything else
 * (SERVFAIL, delegations, updates, transfers, an answer next to an SOA) it returns false and leaves the
 * bytes alone, and the query goes the full way.
 */
export function passWire(
  wire: Buffer,
  end: number,
  qtype: number,
  opts: CacheOptions,
  showAd: boolean,
): boolean {
  if (qtype === 252 || qtype === 251) return false;
  const flags = wire.readUInt16BE(2);
  const opcode = (flags >> 11) & 0xf;
  const rcode = flags & 0xf;
  if (opcode !== 0) return false;
  const spans = recordSpans(wire, end);
  if (!spans) return false;
  const [answer, authority, additional] = spans;
  const soa = authority.some((s) => s.type === SOA);
  let denial: boolean;
  if (answer.length > 0) {
    // NOERROR; with an SOA beside it, whether it is NODATA depends on the CNAME chain: leave it to serveDNS.
    if (rcode !== 0 || soa) return false;
    denial = false;
  } else if (rcode === 3 || (rcode === 0 && soa)) {
    denial = true;
  } else if (rcode === 0 && !authority.some((s) => s.type === NS)) {
    denial = false;
  } else {
    return false;
  }
  const records = [...answer, ...authority, ...additional].filter((s) => s.type !== OPT);
  const max = denial ? opts.denialMaxTtl : opts.successMaxTtl;
  const min = denial ? opts.denialMinTtl : opts.successMinTtl;
  let low = records.length === 0 ? 5 : max;
  for (const s of records) low = Math.min(low, wire.readUInt32BE(s.ttl));
  const ttl = Math.min(Math.max(low, min), max);
  for (const s of records) wire.writeUInt32BE(ttl >>> 0, s.ttl);
  if (!showAd && flags & 0x20) wire.writeUInt16BE(flags & ~0x20, 2);
  return true;
}
