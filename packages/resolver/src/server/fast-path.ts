import { matchZone } from "../plugin/zones.js";
import type { Transport } from "../wire/edns.js";
import { MAX_TCP_SIZE, MIN_UDP_SIZE } from "../wire/edns.js";
import { type PeekedQuery, peekQuery, REPLY_OPT_SIZE, writeReplyOpt } from "../wire/peek.js";
import type { Outcome, Site } from "./dispatch.js";

/** A server's zones, and for each the pair siteOf hands out (made once, not per query). */
const zonesOf = new WeakMap<readonly Site[], { zones: string[]; found: { zone: string; site: Site }[] }>();

/** The site whose zone a peeked query is in, as dispatch chooses it, or undefined. */
export function siteOf(
  q: PeekedQuery,
  sites: readonly Site[],
): { readonly zone: string; readonly site: Site } | undefined {
  let known = zonesOf.get(sites);
  if (!known) {
    known = { zones: sites.map((s) => s.zone), found: sites.map((site) => ({ zone: site.zone, site })) };
    zonesOf.set(sites, known);
  }
  const zone = matchZone(q.name, known.zones);
  return zone === undefined ? undefined : known.found[known.zones.indexOf(zone)];
}

/** The room a reply to `q` has: the OPT record the server appends, and the client's size limit. */
export function replyRoom(q: PeekedQuery, transport: Transport): { reserve: number; limit: number } {
  const reserve = q.udpSize === undefined ? 0 : REPLY_OPT_SIZE;
  const limit = transport === "tcp" ? MAX_TCP_SIZE : Math.max(q.udpSize ?? MIN_UDP_SIZE, MIN_UDP_SIZE);
  return { reserve, limit };
}

/** `reply` with the server's OPT record written into its last `REPLY_OPT_SIZE` bytes and counted. */
export function finishWithOpt(reply: Buffer, q: PeekedQuery): Buffer {
  writeReplyOpt(reply, reply.length - REPLY_OPT_SIZE, q);
  reply.writeUInt16BE(reply.readUInt16BE(10) + 1, 10);
  return reply;
}

/** The outcome of a reply built from a query's bytes: no decoded request or response exists. */
export function wireOutcome(
  q: PeekedQuery,
  reply: Buffer,
  found: { zone: string; site: Site },
  duration: number,
  plugin: string | undefined,
): Outcome {
  const out: Outcome = {
    reply,
    zone: found.zone,
    qtype: q.qtype,
    rcode: (reply[3] as number) & 0xf,
    site: found.site,
    requestSize: q.packet.length,
    duration,
  };
  if (plugin !== undefined) out.plugin = plugin;
  return out;
}

/**
 * Answers a packet without decoding it when the chain can (a cache hit), or returns undefined and the
 * packet goes through `dispatch`. The outcome is what `dispatch` would report for it, minus the decoded
 * request and response, which nobody built. `peeked` is the packet's peekQuery, when the caller has it.
 */
export function answerFast(
  packet: Buffer,
  sites: readonly Site[],
  server: string,
  transport: Transport,
  peeked?: PeekedQuery,
): Outcome | undefined {
  const started = performance.now();
  const q = peeked ?? peekQuery(packet);
  if (!q) return undefined;
  const found = siteOf(q, sites);
  const answer = found?.site.handler.answerFromWire;
  if (!found || !answer) return undefined;
  const { zone, site } = found;
  const { reserve, limit } = replyRoom(q, transport);
  const trace: { plugin?: string } = {};
  const reply = answer.call(site.handler, q, { zone, server, reserve, limit, trace });
  if (!reply) return undefined;
  if (reserve > 0) finishWithOpt(reply, q);
  return wireOutcome(q, reply, found, (performance.now() - started) / 1000, trace.plugin);
}
