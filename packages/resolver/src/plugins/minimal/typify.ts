import type { Message, ResourceRecord } from "../../wire/message.js";

/**
 * CoreDNS's response.Typify, the plain one (the cache's `classify` adds a NODATA rule of its own, so it cannot
 * stand in here). Only what `minimal` asks of it is kept apart: whether a reply is a plain positive answer.
 */
export function isPlainNoError(m: Message, nowSeconds: number): boolean {
  if (m.opcode === 5 || m.opcode === 4) return false;
  const qtype = m.question[0]?.type;
  if (qtype === 252 || qtype === 251) return false;
  // A DNSSEC reply whose signatures are outside their validity period counts as an error upstream.
  if (
    m.edns?.dnssecOk &&
    [m.answer, m.authority, m.additional].some((s) => hasExpiredSignature(s, nowSeconds))
  )
    return false;
  if (m.rcode !== 0) return false;
  if (m.answer.length > 0) return true;
  return !m.authority.some((rr) => rr.type === "SOA" || rr.type === "NS");
}

const YEAR68 = 2 ** 31;

/** miekg/dns RRSIG.ValidityPeriod, with its serial-number arithmetic (RFC 4034 3.1.5), negated. */
function hasExpiredSignature(records: readonly ResourceRecord[], now: number): boolean {
  for (const rr of records) {
    if (rr.type !== "TYPE46" || rr.data.length < 16) continue;
    const expiration = rr.data.readUInt32BE(8);
    const inception = rr.data.readUInt32BE(12);
    const from = inception + Math.trunc((inception - now) / YEAR68) * YEAR68;
    const until = expiration + Math.trunc((expiration - now) / YEAR68) * YEAR68;
    if (!(from <= now && now <= until)) return true;
  }
  return false;
}
