import type { Handler, Peer, QueryContext, ResponseWriter, Result } from "../plugin/handler.js";
import { clientWrote } from "../plugin/handler.js";
import { matchZone } from "../plugin/zones.js";
import { Rcode } from "../wire/constants.js";
import type { Transport } from "../wire/edns.js";
import { MIN_UDP_SIZE, replyEdns, replySizeLimit } from "../wire/edns.js";
import { encodeMessage, encodeOpt } from "../wire/encode.js";
import type { Edns, Message, Question } from "../wire/message.js";
import { fitToSize } from "../wire/truncate.js";
import { classify, errorReply } from "./accept.js";

/** Told about every packet a site answered (and every dropped one), after the reply was sent. */
export type OutcomeObserver = (
  outcome: Outcome,
  info: { server: string; transport: Transport; remote: Peer },
) => void;

/** One zone of a server block and the plugin chain that serves it. */
export interface Site {
  zone: string;
  handler: Handler;
  /** Plugins that watch replies, e.g. prometheus; shared by every zone of a server block. */
  observers?: readonly OutcomeObserver[];
}

/** What happened to one packet, for logs and metrics. */
export interface Outcome {
  /** The bytes to send back; undefined when the packet is dropped. */
  reply?: Buffer;
  /** Absent for replies built from the query's bytes (`answerFast`); `qtype` is always there then. */
  request?: Message;
  response?: Message;
  /** The question's type, when the packet had a readable question. */
  qtype?: number;
  /** The zone that took the query, "dropped" when none did (CoreDNS's metric label). */
  zone: string;
  rcode?: number;
  error?: Error;
  /** The site whose chain answered; undefined for packets no zone took. */
  site?: Site;
  /** The plugin that wrote the reply, when one did (CoreDNS's `plugin` metric label). */
  plugin?: string;
  /** What the chain threw: CoreDNS's recovered panic, answered SERVFAIL, logged and counted by the server. */
  panic?: Error;
  requestSize: number;
  /** Time spent in dispatch, in seconds. */
  duration: number;
}

export interface DispatchContext {
  sites: readonly Site[];
  /** e.g. `dns://:53` */
  server: string;
  transport: Transport;
  remote: Peer;
  signal?: AbortSignal;
  /** False under `debug`: an exception from the chain rejects dispatch instead of becoming SERVFAIL. */
  recover?: boolean;
  /** Classes other than IN reach the chains (a block on this server has `forward`, as in CoreDNS). */
  anyClass?: boolean;
  /** Monotonic milliseconds; injectable for tests. */
  now?: () => number;
}

/** Takes one packet from the wire to the bytes of its reply, the way CoreDNS's dnsserver does. */
export async function dispatch(packet: Buffer, ctx: DispatchContext): Promise<Outcome> {
  const now = ctx.now ?? performance.now.bind(performance);
  const started = now();
  const out = await serve(packet, ctx);
  out.duration = (now() - started) / 1000;
  return out;
}

async function serve(packet: Buffer, ctx: DispatchContext): Promise<Outcome> {
  const requestSize = packet.length;
  const verdict = classify(packet, ctx.anyClass);
  if (verdict.action === "drop")
    return { zone: "dropped", error: new Error(verdict.reason), requestSize, duration: 0 };
  if (verdict.action === "reply") {
    return {
      zone: "dropped",
      reply: encodeMessage(verdict.reply),
      response: verdict.reply,
      rcode: verdict.reply.rcode,
      requestSize,
      duration: 0,
    };
  }
  const request = verdict.request;
  const q = request.question[0] as Question;
  const zones = ctx.sites.map((s) => s.zone);
  const zone = matchZone(q.name, zones);
  const site = ctx.sites.find((s) => s.zone === zone);
  if (!site || zone === undefined)
    return { ...finish(request, errorReply(request, Rcode.REFUSED), ctx, "dropped"), requestSize };

  let written: Message | undefined;
  let wire: Buffer | undefined;
  const writer: ResponseWriter = {
    transport: ctx.transport,
    remote: ctx.remote,
    write(msg, encoded) {
      if (written) return;
      written = msg;
      wire = encoded;
    },
  };
  const trace: { plugin?: string } = {};
  const qctx: QueryContext = ctx.signal
    ? { zone, server: ctx.server, signal: ctx.signal, requestSize, trace }
    : { zone, server: ctx.server, requestSize, trace };
  let result: Result;
  let panic: Error | undefined;
  try {
    result = await site.handler.serveDNS(qctx, writer, request);
  } catch (err) {
    if (ctx.recover === false) throw err;
    panic = err instanceof Error ? err : new Error(String(err));
    result = { rcode: Rcode.SERVFAIL, error: panic };
  }
  return settle(
    request,
    zone,
    site,
    ctx,
    { written, wire, result, panic, plugin: trace.plugin },
    requestSize,
  );
}

/** What a chain left behind for one request: the reply it wrote (and its bytes), or only its result. */
export interface ChainOutput {
  written: Message | undefined;
  wire: Buffer | undefined;
  result: Result;
  panic: Error | undefined;
  plugin: string | undefined;
}

/** The outcome of a request a site's chain served, from what the chain wrote and returned. */
export function settle(
  request: Message,
  zone: string,
  site: Site,
  ctx: DispatchContext,
  chain: ChainOutput,
  requestSize: number,
): Outcome {
  const { written, wire, result, panic } = chain;
  const base = {
    site,
    requestSize,
    ...(chain.plugin === undefined ? {} : { plugin: chain.plugin }),
    ...(panic ? { panic } : {}),
  };
  if (written) return { ...finish(request, written, ctx, zone, result.error, wire), ...base };
  if (result.dropped && clientWrote(result.rcode))
    return { zone, request, rcode: result.rcode, ...base, duration: 0 };
  if (clientWrote(result.rcode)) {
    // Breaks the contract (success claimed, nothing written); answer rather than leave the client hanging.
    const error =
      result.error ?? new Error(`chain for ${zone} returned rcode ${result.rcode} without a reply`);
    return { ...finish(request, errorReply(request, Rcode.SERVFAIL), ctx, zone, error), ...base };
  }
  // As CoreDNS's recovery reports it: under zone "dropped", since the panic skipped the metrics plugin.
  const label = panic ? "dropped" : zone;
  return { ...finish(request, errorReply(request, result.rcode), ctx, label, result.error), ...base };
}

/** Calls the observers of the site that answered; a packet no zone took goes to every observer. */
export function notifyObservers(
  out: Outcome,
  sites: readonly Site[],
  info: { server: string; transport: Transport; remote: Peer },
): void {
  const observers = out.site ? (out.site.observers ?? []) : new Set(sites.flatMap((s) => s.observers ?? []));
  for (const observe of observers) observe(out, info);
}

/** Adds the OPT record, fits the reply to the client's buffer and encodes it. */
function finish(
  request: Message,
  reply: Message,
  ctx: DispatchContext,
  zone: string,
  error?: Error,
  wire?: Buffer,
): Outcome {
  const shaped: Message = { ...reply };
  const edns = replyEdns(request, reply);
  if (edns) shaped.edns = edns;
  else delete shaped.edns;
  if (!edns && shaped.rcode > 0xf) shaped.rcode = Rcode.SERVFAIL;
  const ready = wire && reply.rcode <= 0xf ? appendOpt(wire, edns) : undefined;
  if (ready && ready.length <= replySizeLimit(request, ctx.transport)) {
    const out: Outcome = {
      reply: ready,
      request,
      response: shaped,
      zone,
      rcode: shaped.rcode,
      requestSize: 0,
      duration: 0,
    };
    if (error) out.error = error;
    return out;
  }
  try {
    // Encode once; only a reply too big for the client goes through fitToSize (which encodes again).
    const limit = replySizeLimit(request, ctx.transport);
    const whole = encodeMessage(shaped);
    const fits = whole.length <= Math.max(limit, MIN_UDP_SIZE);
    const fitted = fits ? shaped : fitToSize(shaped, limit);
    const out: Outcome = {
      reply: fits ? whole : encodeMessage(fitted),
      request,
      response: fitted,
      zone,
      rcode: fitted.rcode,
      requestSize: 0,
      duration: 0,
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
      requestSize: 0,
      duration: 0,
    };
  }
}

/** An encoded reply with the server's OPT record added at the end of the additional section. */
function appendOpt(wire: Buffer, edns: Edns | undefined): Buffer {
  if (!edns) return wire;
  const opt = encodeOpt(edns);
  const out = Buffer.concat([wire, opt]);
  out.writeUInt16BE(out.readUInt16BE(10) + 1, 10);
  return out;
}
