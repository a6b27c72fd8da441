import { typeName } from "../../wire/constants.js";
import type { Message, Question, ResourceRecord } from "../../wire/message.js";
import { lowerName } from "../../wire/name.js";

/** CoreDNS's response.Type, as far as the cache and log need it. */
export type ResponseKind =
  | "noerror"
  | "nxdomain"
  | "servfail"
  | "nodata"
  | "delegation"
  | "meta"
  | "update"
  | "othererror";

/** What a reply is (CoreDNS response.Typify, plus the cache's CNAME-without-target NODATA rule). */
export function classify(m: Message): ResponseKind {
  if (m.opcode === 5) return "update";
  if (m.opcode === 4) return "meta";
  const qtype = m.question[0]?.type;
  if (qtype === 252 || qtype === 251) return "meta";
  const soa = m.authority.some((rr) => rr.type === "SOA");
  if (m.answer.length > 0 && m.rcode === 0) return soa && !answersQuestion(m) ? "nodata" : "noerror";
  if (m.answer.length > 0 && m.rcode === 3) return "othererror";
  if (soa && m.rcode === 0) return "nodata";
  if (m.rcode === 3) return "nxdomain";
  if (m.rcode === 2 || m.rcode === 4) return "servfail";
  if (m.rcode === 0 && m.authority.some((rr) => rr.type === "NS")) return "delegation";
  if (m.rcode === 0) return "noerror";
  return "othererror";
}

/** Whether `reply` is a response to `request`'s question (CoreDNS request.Match). */
export function matchesQuestion(request: Question, reply: Message): boolean {
  const q = reply.question[0];
  return (
    reply.qr &&
    q !== undefined &&
    lowerName(q.name) === lowerName(request.name) &&
    q.type === request.type &&
    q.class === request.class
  );
}

/** Whether the answer section reaches the qtype, following a CNAME chain from the qname. */
export function answersQuestion(m: Message): boolean {
  const q = m.question[0];
  if (!q || m.rcode !== 0 || m.answer.length === 0) return false;
  const owned = (rr: ResourceRecord, name: string) =>
    (q.class === 255 || rr.class === q.class) && lowerName(rr.name) === lowerName(name);
  if (q.type === 255) return m.answer.some((rr) => owned(rr, q.name));
  let name = q.name;
  const seen = new Set<string>();
  for (;;) {
    const targets = new Set(
      m.answer
        .filter((rr) => rr.type === "CNAME" && owned(rr, name))
        .map((rr) => lowerName(rr.data as string)),
    );
    if (targets.size > 1) return false;
    const [target] = targets;
    if (q.type === 5) return target !== undefined;
    if (target === undefined) break;
    if (seen.has(target)) return false;
    seen.add(target);
    name = target;
  }
  const want = typeName(q.type);
  return m.answer.some((rr) => rr.type === want && owned(rr, name));
}
