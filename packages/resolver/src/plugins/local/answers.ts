import type { Message, ResourceRecord } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";

/** Upstream's TTL for everything local answers, and the SOA's minimum. */
export const LOCAL_TTL = 604800;

const A = 1;
const NS = 2;
const SOA = 6;
const PTR = 12;
const AAAA = 28;

const APEXES = new Set(["localhost.", "0.in-addr.arpa.", "127.in-addr.arpa.", "255.in-addr.arpa."]);

export function localSoa(owner: string): ResourceRecord {
  const data = { mname: "localhost.", rname: "root.localhost.", serial: 1, refresh: 0, retry: 0, expire: 0 };
  return { name: owner, type: "SOA", class: 1, ttl: LOCAL_TTL, data: { ...data, minimum: LOCAL_TTL } };
}

/** A/AAAA of the loopback for `owner`, or NODATA with an SOA owned by it (a name under `.localhost.`). */
export function loopbackReply(r: Message, owner: string, qtype: number): Message {
  const reply = replyTo(r);
  if (qtype === A) reply.answer = [{ name: owner, type: "A", class: 1, ttl: LOCAL_TTL, data: "127.0.0.1" }];
  else if (qtype === AAAA)
    reply.answer = [{ name: owner, type: "AAAA", class: 1, ttl: LOCAL_TTL, data: "::1" }];
  else reply.authority = [localSoa(owner)];
  return reply;
}

/**
 * The reply for a name in one of the local zones. `qname` is spelled as asked, `name` lower-cased, `zone` the
 * zone's part of `qname` as asked: the apexes answer SOA and NS (and `localhost.` its addresses), the loopback's
 * reverse name its PTR; everything else in the zones is NXDOMAIN.
 */
export function zoneReply(r: Message, qname: string, name: string, zone: string, qtype: number): Message {
  const reply = replyTo(r);
  if (APEXES.has(name)) {
    const address = name === "localhost." && (qtype === A || qtype === AAAA);
    if (address) return loopbackReply(r, qname, qtype);
    if (qtype === SOA) reply.answer = [localSoa(qname)];
    else if (qtype === NS)
      reply.answer = [{ name: qname, type: "NS", class: 1, ttl: LOCAL_TTL, data: "localhost." }];
    else reply.authority = [localSoa(qname)];
    return reply;
  }
  if (name === "1.0.0.127.in-addr.arpa.") {
    if (qtype === PTR)
      reply.answer = [{ name: qname, type: "PTR", class: 1, ttl: LOCAL_TTL, data: "localhost." }];
    else reply.authority = [localSoa(zone)];
    return reply;
  }
  reply.rcode = 3;
  reply.authority = [localSoa(zone)];
  return reply;
}
