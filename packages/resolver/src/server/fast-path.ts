import { matchZone } from "../plugin/zones.js";
import type { Transport } from "../wire/edns.js";
import { MAX_TCP_SIZE, MIN_UDP_SIZE } from "../wire/edns.js";
import { peekQuery, REPLY_OPT_SIZE, writeReplyOpt } from "../wire/peek.js";
import type { Outcome, Site } from "./dispatch.js";

const zonesOf = new WeakMap<readonly Site[], string[]>();

/**
 * Answers a packet without decoding it when the chain can (a cache hit), or returns undefined and the
 * packet goes through `dispatch`. The outcome is what `dispatch` would report for it, minus the decoded
 * request and response, which nobody built.
 */
export function answerFast(
  packet: Buffer,
  sites: readonly Site[],
  server: string,
  transport: Transport,
): Outcome | undefined {
  const started = performance.now();
  const q = peekQuery(packet);
  if (!q) return undefined;
  let zones = zonesOf.get(sites);
  if (!zones) {
    zones = sites.map((s) => s.zone);
    zonesOf.set(sites, zones);
  }
  const zone = matchZone(q.name, zones);
  if (zone === undefined) return undefined;
  const site = sites[zones.indexOf(zone)];
  if (!site?.handler.answerFromWire) return undefined;
  const reserve = q.udpSize === undefined ? 0 : REPLY_OPT_SIZE;
  const limit = transport === "tcp" ? MAX_TCP_SIZE : Math.max(q.udpSize ?? MIN_UDP_SIZE, MIN_UDP_SIZE);
  const trace: { plugin?: string } = {};
  const reply = site.handler.answerFromWire(q, { zone, server, reserve, limit, trace });
  if (!reply) return undefined;
  if (reserve > 0) {
    writeReplyOpt(reply, reply.length - reserve, q);
    reply.writeUInt16BE(reply.readUInt16BE(10) + 1, 10);
  }
  const out: Outcome = {
    reply,
    zone,
    qtype: q.qtype,
    rcode: (reply[3] as number) & 0xf,
    site,
    requestSize: packet.length,
    duration: (performance.now() - started) / 1000,
  };
  if (trace.plugin !== undefined) out.plugin = trace.plugin;
  return out;
}
