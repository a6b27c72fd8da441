import { answersQuestion, type ResponseKind } from "../../plugin/pkg/response.js";
import type { Message } from "../../wire/message.js";

/**
 * Whether a reply may be stored at all: never truncated ones, errors other than SERVFAIL/NOTIMP, updates,
 * transfers or NOTIFY; NXDOMAIN only with an SOA; a CNAME chain that misses the qtype only with an SOA.
 */
export function cacheable(m: Message, kind: ResponseKind): boolean {
  if (m.tc) return false;
  if (kind === "othererror" || kind === "meta" || kind === "update") return false;
  const soa = m.authority.some((rr) => rr.type === "SOA");
  if (kind === "nxdomain" && !soa) return false;
  if (kind === "noerror" && !soa && m.answer.length > 0 && !answersQuestion(m)) return false;
  return true;
}

/** The store a reply of this kind goes to. */
export function storeFor(kind: ResponseKind): "success" | "denial" {
  return kind === "noerror" || kind === "delegation" ? "success" : "denial";
}

/**
 * The smallest TTL in the reply, capped at `max` (dnsutil.MinimalTTL). Replies without records, and
 * kinds other than positive or negative answers, count as 5 s.
 */
export function minimalTtl(m: Message, kind: ResponseKind, max: number): number {
  if (kind !== "noerror" && kind !== "nxdomain" && kind !== "nodata") return 5;
  const all = [...m.answer, ...m.authority, ...m.additional];
  if (all.length === 0) return 5;
  return all.reduce((low, rr) => Math.min(low, rr.ttl), max);
}
