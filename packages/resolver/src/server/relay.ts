import type { Peer, WireRelay } from "../plugin/handler.js";
import { Rcode } from "../wire/constants.js";
import { decodeMessage } from "../wire/decode.js";
import type { Message } from "../wire/message.js";
import type { PeekedQuery } from "../wire/peek.js";
import { REPLY_OPT_SIZE } from "../wire/peek.js";
import type { DispatchContext, Outcome, Site } from "./dispatch.js";
import { settle } from "./dispatch.js";
import { finishWithOpt, replyRoom, siteOf, wireOutcome } from "./fast-path.js";

export interface RelayContext {
  sites: readonly Site[];
  server: string;
  remote: Peer;
  /** False under `debug`: an exception from the chain rejects instead of becoming SERVFAIL. */
  recover: boolean;
}

function decoded(packet: Buffer): Message {
  const d = decodeMessage(packet);
  if (d.kind !== "message") throw new Error("relay: bytes that were checked did not decode");
  return d.message;
}

/**
 * Relays a plain UDP query (see peekQuery) through its chain's `relayFromWire` (forward, for names no plugin
 * in front answers), or returns undefined and the packet goes through `dispatch`. The common reply, the
 * upstream's bytes without OPT that fit the client, goes out as bytes with the server's OPT appended; any
 * other ending decodes the query and is finished exactly as `dispatch` finishes it. The outcome is what
 * `dispatch` would report, minus the decoded request and response where nobody built them.
 */
export function relayFast(q: PeekedQuery, ctx: RelayContext): Promise<Outcome> | undefined {
  const started = performance.now();
  const found = siteOf(q, ctx.sites);
  const relay = found?.site.handler.relayFromWire;
  if (!found || !relay) return undefined;
  const { zone, site } = found;
  const { reserve, limit } = replyRoom(q, "udp");
  const trace: { plugin?: string } = {};
  const pending = relay.call(site.handler, q, { zone, server: ctx.server, reserve, limit, trace });
  if (!pending) return undefined;
  const done = (out: Outcome) => {
    out.duration = (performance.now() - started) / 1000;
    return out;
  };
  return pending.then(
    (relayed) => {
      const plugin = relayed.wire || relayed.reply ? trace.plugin : undefined;
      return done(outcomeOf(q, relayed, zone, site, ctx, plugin, undefined));
    },
    (err: unknown) => {
      if (!ctx.recover) throw err;
      const panic = err instanceof Error ? err : new Error(String(err));
      const relayed = { result: { rcode: Rcode.SERVFAIL, error: panic } };
      return done(outcomeOf(q, relayed, zone, site, ctx, undefined, panic));
    },
  );
}

function outcomeOf(
  q: PeekedQuery,
  relayed: WireRelay,
  zone: string,
  site: Site,
  ctx: RelayContext,
  plugin: string | undefined,
  panic: Error | undefined,
): Outcome {
  const { wire } = relayed;
  const { limit } = replyRoom(q, "udp");
  if (wire && !relayed.reply && wire.length + (q.udpSize === undefined ? 0 : REPLY_OPT_SIZE) <= limit) {
    const reply = q.udpSize === undefined ? wire : finishWithOpt(withRoom(wire), q);
    return wireOutcome(q, reply, { zone, site }, 0, plugin);
  }
  const dispatchContext: DispatchContext = {
    sites: ctx.sites,
    server: ctx.server,
    transport: "udp",
    remote: ctx.remote,
  };
  const written = relayed.reply ?? (wire ? decoded(wire) : undefined);
  const chain = { written, wire, result: relayed.result, panic, plugin };
  return settle(decoded(q.packet), zone, site, dispatchContext, chain, q.packet.length);
}

/** A copy of `wire` with REPLY_OPT_SIZE spare bytes at the end. */
function withRoom(wire: Buffer): Buffer {
  const out = Buffer.allocUnsafe(wire.length + REPLY_OPT_SIZE);
  wire.copy(out, 0);
  return out;
}
