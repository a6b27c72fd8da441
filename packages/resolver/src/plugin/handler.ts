import type { Transport } from "../wire/edns.js";
import type { Message } from "../wire/message.js";
import type { PeekedQuery } from "../wire/peek.js";

/** Who asked, and over what. */
export interface Peer {
  address: string;
  port: number;
  family: "IPv4" | "IPv6";
}

/** Where a plugin sends its reply. Wrapping writers (cache, loadbalance) see the reply on its way out. */
export interface ResponseWriter {
  readonly transport: Transport;
  readonly remote: Peer;
  /**
   * Sends the reply. `wire`, when given, is `msg` already encoded (without OPT); the server then sends
   * those bytes instead of encoding again. A writer that changes `msg` must not pass `wire` on.
   */
  write(msg: Message, wire?: Buffer): void;
}

/** Per-query context passed down the chain. */
export interface QueryContext {
  /** The server block zone that matched the query name, in its configured spelling. */
  readonly zone: string;
  /** The server's address as CoreDNS labels it in metrics, e.g. `dns://:53`. */
  readonly server: string;
  readonly signal?: AbortSignal;
  /** The size of the query as it came off the wire, for metrics (0 for in-process queries). */
  readonly requestSize?: number;
  /** Filled in while serving: the plugin that wrote the reply (CoreDNS's `plugin` metric label). */
  readonly trace?: { plugin?: string };
}

/**
 * What a handler returns. The contract is CoreDNS's: SERVFAIL, REFUSED, FORMERR and NOTIMP mean the
 * handler wrote nothing and the server must answer with that rcode; any other rcode means a reply was
 * written. `error` is reported (by the `errors` plugin) whether or not a reply was written.
 */
export interface Result {
  rcode: number;
  error?: Error;
  /** Set with a success rcode and nothing written: the client is to get no reply at all (acl's `drop`). */
  dropped?: boolean;
}

/** What a handler answering from raw bytes is told (see `Handler.answerFromWire`). */
export interface WireAnswerContext {
  readonly zone: string;
  readonly server: string;
  /** Bytes to leave free at the end of the reply, for the OPT record the server appends. */
  readonly reserve: number;
  /** The largest reply the client takes, reserve included; a larger one must not be answered here. */
  readonly limit: number;
  /** Filled in by the plugin that answered, as for `serveDNS`. */
  readonly trace: { plugin?: string };
}

/**
 * What `Handler.relayFromWire` settles with. `wire` alone: the reply's bytes, under the client's ID and
 * without OPT, which the server finishes as it finishes a written reply. `reply` (with `wire` when those
 * are its bytes): a reply as `serveDNS` would write it. Neither: nothing was written, and `result` says
 * what to answer, as `serveDNS`'s result does.
 */
export interface WireRelay {
  wire?: Buffer;
  reply?: Message;
  result: Result;
}

export interface Handler {
  readonly name: string;
  serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result>;
  /**
   * The fast path for the plainest queries, synchronous and without decoding: the finished reply
   * (without OPT, with `reserve` spare bytes at the end), or undefined to take the query through
   * `serveDNS` instead. Returning a reply must leave the same trace (reply, metrics, state) as
   * `serveDNS` would have for this query. Handlers that cannot tell leave it out; one that lets these
   * queries through untouched takes `passOnFromWire` (`pkg/pass-through.ts`).
   */
  answerFromWire?(q: PeekedQuery, ctx: WireAnswerContext): Buffer | undefined;
  /**
   * The asynchronous fast path for the same plain queries over UDP: undefined (at once) to take the query
   * through `serveDNS`, or the relayed reply. Settling must leave the same trace (reply, metrics, state)
   * as `serveDNS` would have. A handler in front may pass the call on only where its `serveDNS` would pass
   * the query on unchanged and ignore the result, as for a name outside its zones; a handler either passes
   * the call on or relays itself, never both (the innermost one that returned a promise is the one named
   * as having written the reply).
   */
  relayFromWire?(q: PeekedQuery, ctx: WireAnswerContext): Promise<WireRelay> | undefined;
}

const NOTHING_WRITTEN = new Set([1, 2, 4, 5]);

/** Whether a handler that returned `rcode` already wrote its reply. */
export function clientWrote(rcode: number): boolean {
  return !NOTHING_WRITTEN.has(rcode);
}

/** Prefixes an error with the plugin that raised it: `plugin/<name>: ...`. */
export class PluginError extends Error {
  override name = "PluginError";
  constructor(
    readonly plugin: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(`plugin/${plugin}: ${message}`, options);
  }
}

/** Calls `next`, or fails with SERVFAIL when there is none (the end of the chain was reached). */
export async function nextOrFailure(
  name: string,
  next: Handler | undefined,
  ctx: QueryContext,
  w: ResponseWriter,
  r: Message,
): Promise<Result> {
  if (!next) return { rcode: 2, error: new PluginError(name, "no next plugin found") };
  return next.serveDNS(ctx, w, r);
}
