import { MIN_UDP_SIZE } from "./edns.js";
import { encodedLength } from "./encode.js";
import type { Message, ResourceRecord } from "./message.js";

/**
 * Makes `msg` fit `size` bytes (compressed) the way miekg/dns's Truncate does for CoreDNS: keep the
 * header, question and OPT, then as many records as fit, in answer, authority, additional order, and set
 * TC if any record was left out. Returns a new message; the input is not touched.
 */
export function fitToSize(msg: Message, size: number): Message {
  const limit = Math.max(size, MIN_UDP_SIZE);
  if (encodedLength(msg) <= limit) return msg;

  const kept: Message = { ...msg, answer: [], authority: [], additional: [] };
  const sections = ["answer", "authority", "additional"] as const;
  let full = false;
  for (const section of sections) {
    const from: ResourceRecord[] = msg[section];
    for (const rr of from) {
      if (full) break;
      kept[section].push(rr);
      if (encodedLength(kept) > limit) {
        kept[section].pop();
        full = true;
      }
    }
  }
  kept.tc = true;
  return kept;
}
