import type { Handler, Peer, QueryContext, ResponseWriter, Result } from "../plugin/handler.js";
import { clientWrote } from "../plugin/handler.js";
import { matchZone } from "../plugin/zones.js";
import { Rcode } from "../wire/constants.js";
import type { Transport } from "../wire/edns.js";
import { replyEdns, replySizeLimit } from "../wire/edns.js";
import { encodeMessage } from "../wire/encode.js";
import type { Message, Question } from "../wire/message.js";
import { fitToSize } from "../wire/truncate.js";
import { classify, errorReply } from "./accept.js";

/** One zone of a server block and the plugin chain that serves it. */
export interface Site {
  zone: string;
  handler: Handler;
}

/** What happened to one packet, for logs and metrics. */
export interface Outcome {
  /** The bytes to send back; undefined when the packet is dropped. */
  reply?: Buffer;
  request?: Message;
  response?: Message;
  /** The zone that took the query, "dropped" when none did (CoreDNS's metric label). */
  zone: string;
  rcode?: number;
  error?: Error;
}

export interface DispatchContext {
  sites: readonly Site[];
  /** e.g. `dns://:53` */
  server: string;
  transport: Transport;
  remote: Peer;
  signal?: AbortSignal;
}

/** Takes one packet from the wire to the bytes of its reply, the way CoreDNS's dnsserver does. */
export async function dispatch(packet: Buffer, ctx: DispatchContext): Promise<Outcome> {
  const verdict = classify(packet);
  if (verdict.action === "drop") return { zone: "dropped", error: new Error(verdict.reason) };
  if (verdict.action === "reply") {
    return {
      zone: "dropped",
      reply: encodeMessage(verdict.reply),
      response: verdict.reply,
      rcode: verdict.reply.rcode,
    };
  }
  const request = verdict.request;
  const q = request.question[0] as Question;
  const zones = ctx.sites.map((s) => s.zone);
  const zone = matchZone(q.name, zones);
  const site = ctx.sites.find((s) => s.zone === zone);
  if (!site || zone === undefined) return finish(request, errorReply(request, Rcode.REFUSED), ctx, "dropped");

  let written: Message | undefined;
  const writer: ResponseWriter = {
    transport: ctx.transport,
    remote: ctx.remote,
    write(msg) {
      written ??= msg;
    },
  };
  const qctx: QueryContext = ctx.signal
    ? { zone, server: ctx.server, signal: ctx.signal }
    : { zone, server: ctx.server };
  let result: Result;
  try {
    result = await site.handler.serveDNS(qctx, writer, request);
  } catch (err) {
    result = { rcode: Rcode.SERVFAIL, error: err instanceof Error ? err : new Error(String(err)) };
  }
  if (written) return finish(request, written, ctx, zone, result.error);
  if (clientWrote(result.rcode)) {
    // Breaks the contract (success claimed, nothing written); answer rather than leave the client hanging.
    const error =
      result.error ?? new Error(`chain for ${zone} returned rcode ${result.rcode} without a reply`);
    return finish(request, errorReply(request, Rcode.SERVFAIL), ctx, zone, error);
  }
  return finish(request, errorReply(request, result.rcode), ctx, zone, result.error);
}

/** Adds the OPT record, fits the reply to the client's buffer and encodes it. */
function finish(
  request: Message,
  reply: Message,
  ctx: DispatchContext,
  zone: string,
  error?: Error,
): Outcome {
  const shaped: Message = { ...reply };
  const edns = replyEdns(request, reply);
  if (edns) shaped.edns = edns;
  else delete shaped.edns;
  if (!edns && shaped.rcode > 0xf) shaped.rcode = Rcode.SERVFAIL;
  try {
    const fitted = fitToSize(shaped, replySizeLimit(request, ctx.transport));
    const out: Outcome = {
      reply: encodeMessage(fitted),
      request,
      response: fitted,
      zone,
      rcode: fitted.rcode,
    };
    if (error) out.error = error;
    return out;
  } catch (err) {
    // A plugin produced a record that cannot be encoded; the client still gets a well-formed answer.
    const fallback = errorReply(request, Rcode.SERVFAIL);
    if (edns) fallback.edns = edns;
    return {
      reply: encodeMessage(fallback),
      request,
      response: fallback,
      zone,
      rcode: Rcode.SERVFAIL,
      error: err instanceof Error ? err : new Error(String(err)),
    };
  }
}
