import type { Message } from "../../wire/message.js";

/**
 * Makes a reply for a search-path name acceptable as the answer to `original`: a CNAME from `original`
 * to the owner of the first record not already named `original` goes in front (with that record's TTL),
 * and the question is put back to what the client asked. CoreDNS compares the names case-insensitively.
 */
export function cnameFromOriginal(reply: Message, original: string): void {
  const lowered = original.toLowerCase();
  const target = reply.answer.find((rr) => rr.name.toLowerCase() !== lowered);
  if (target)
    reply.answer.unshift({ name: original, type: "CNAME", class: 1, ttl: target.ttl, data: target.name });
  const question = reply.question[0];
  if (question) question.name = original;
}
