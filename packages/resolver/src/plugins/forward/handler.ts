import type {
  Handler,
  QueryContext,
  ResponseWriter,
  Result,
  WireAnswerContext,
  WireRelay,
} from "../../plugin/handler.js";
import { nextOrFailure, PluginError } from "../../plugin/handler.js";
import { matchesQuestion } from "../../plugin/pkg/response.js";
import { matchZone } from "../../plugin/zones.js";
import type { Timers } from "../../server/timers.js";
import { decodeMessage } from "../../wire/decode.js";
import type { Transport } from "../../wire/edns.js";
import { encodeMessage } from "../../wire/encode.js";
import type { Message } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";
import type { PeekedQuery } from "../../wire/peek.js";
import { sameQuestion, scanMessage } from "../../wire/scan.js";
import { exchange } from "./exchange.js";
import { type ForwardMetrics, UpstreamSeries } from "./metrics.js";
import type { ForwardOptions } from "./options.js";
import type { Upstream } from "./upstream.js";

export { type ForwardMetrics, forwardMetrics } from "./metrics.js";

/** CoreDNS gives up on a query after 5 s, and waits 2 s for each upstream reply. */
const OVERALL_TIMEOUT_MS = 5000;
const READ_TIMEOUT_MS = 2000;

export interface ForwardRuntime {
  timers: Timers;
  /** Monotonic milliseconds. */
  now: () => number;
  randomId: () => number;
  /** An index in [0, n). */
  randomIndex: (n: number) => number;
}

/** What the exchange loop reads of a reply, decoded or scanned. */
type Readable = { rcode: number; tc: boolean };

/** A relay's result when it wrote a reply (shared: results are only read). */
const WROTE: Result = Object.freeze({ rcode: 0 });

/**
 * A query on its way to the upstreams: its bytes under a fresh ID, and how a reply is read (undefined:
 * unreadable, which counts as a failed exchange).
 */
interface Outgoing<R extends Readable> {
  bytes(id: number): Buffer;
  read(reply: Buffer): R | undefined;
}

/** What a relayed reply reads as. */
type ScannedReply = NonNullable<ReturnType<typeof scanMessage>>;

/** Where `forward` takes over after `firstAttempt`'s exchange failed. */
interface Resume {
  readonly list: readonly Upstream[];
  readonly deadline: number;
  readonly lastError: Error;
}

/** The first reply an upstream gave, read, and its bytes. */
interface Answered<R> {
  reply: R;
  raw: Buffer;
}

/** The decoded way, for `serveDNS`: the request encoded again, replies decoded. */
function messageQuery(r: Message): Outgoing<Message> {
  return {
    bytes: (id) => encodeMessage({ ...r, id }),
    read: (reply) => {
      const d = decodeMessage(reply);
      return d.kind === "message" ? d.message : undefined;
    },
  };
}

/** The byte way, for `relayFromWire`: the client's bytes under another ID, replies only checked. */
class WireQuery implements Outgoing<ScannedReply> {
  constructor(private readonly q: PeekedQuery) {}
  bytes(id: number): Buffer {
    const out = Buffer.allocUnsafe(this.q.packet.length);
    this.q.packet.copy(out, 0);
    out.writeUInt16BE(id, 0);
    return out;
  }
  read(reply: Buffer): ReturnType<typeof scanMessage> {
    return scanMessage(reply);
  }
}

/**
 * The upstream's reply under the client's ID. Without an OPT record of the upstream's to drop, its bytes
 * are the reply too: only the ID differs.
 */
function passOn(reply: Message, raw: Buffer, id: number): { reply: Message; wire?: Buffer } {
  const out = { ...reply, id };
  if (reply.edns !== undefined || reply.rcode > 0xf) return { reply: out };
  raw.writeUInt16BE(id, 0);
  return { reply: out, wire: raw };
}

/**
 * `forward`: sends queries to upstream servers and relays their answers. Upstreams are tried in policy
 * order, skipping those marked down by health checks, until one answers or 5 s have passed.
 */
export class ForwardHandler implements Handler {
  readonly name = "forward";
  private concurrent = 0;
  private rotation = 0;
  private readonly series: Map<Upstream, UpstreamSeries>;
  /** `from` as matchZone takes it, made once. */
  private readonly fromZone: readonly string[];

  constructor(
    private readonly next: Handler | undefined,
    private readonly opts: ForwardOptions,
    private readonly upstreams: readonly Upstream[],
    private readonly rt: ForwardRuntime,
    private readonly metrics: ForwardMetrics,
  ) {
    this.series = new Map(upstreams.map((u) => [u, new UpstreamSeries(metrics, u.addr)]));
    this.fromZone = [opts.from];
  }

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    if (!q || !this.matches(q.name)) return nextOrFailure(this.name, this.next, ctx, w, r);
    const got = await this.forward(messageQuery(r), w.transport, ctx.signal);
    if (!("raw" in got)) return got;
    const { reply, raw } = got;
    if (!matchesQuestion(q, reply)) {
      w.write(replyTo(r, 1));
      return { rcode: 0 };
    }
    if (this.opts.next.includes(reply.rcode) && this.next)
      return nextOrFailure(this.name, this.next, ctx, w, r);
    const out = passOn(reply, raw, r.id);
    w.write(out.reply, out.wire);
    return { rcode: 0 };
  }

  /**
   * The same exchange for a plain UDP query, kept as bytes: the client's query goes out under a fresh ID,
   * and a reply that reads as a question-matching message without OPT comes back as bytes under the client's
   * ID. Any other reply is decoded and handed back as a message, exactly as `serveDNS` would write it.
   * Stanzas with `next` take the full path, since the next plugin needs the decoded query.
   */
  relayFromWire(q: PeekedQuery, ctx: WireAnswerContext): Promise<WireRelay> | undefined {
    if (!this.matches(q.name)) return this.next?.relayFromWire?.(q, ctx);
    if (this.opts.next.length > 0) return undefined;
    return this.relay(q);
  }

  private relay(q: PeekedQuery): Promise<WireRelay> {
    const query = new WireQuery(q);
    const first = this.firstAttempt(query);
    return (first ?? this.forward(query, "udp", undefined)).then((got) => this.relayed(q, got));
  }

  private relayed(q: PeekedQuery, got: Answered<ScannedReply> | Result): WireRelay {
    if (!("raw" in got)) return { result: got };
    const { reply, raw } = got;
    if (reply.qr && sameQuestion(raw, q.packet, q.nameEnd) && reply.opt < 0) {
      raw.writeUInt16BE(q.id, 0);
      return { wire: raw, result: WROTE };
    }
    // Rare: a reply with OPT, or to another question. Decode both and answer as serveDNS does.
    const request = decodeMessage(q.packet);
    const decoded = decodeMessage(raw);
    if (request.kind !== "message" || decoded.kind !== "message")
      throw new Error("forward: a plain query or a checked reply did not decode");
    const r = request.message;
    const asked = r.question[0] as Message["question"][0];
    if (!matchesQuestion(asked, decoded.message)) return { reply: replyTo(r, 1), result: WROTE };
    return { ...passOn(decoded.message, raw, r.id), result: WROTE };
  }

  /**
   * Tries the upstreams in policy order until one answers; beyond `max_concurrent` queries in flight the
   * query is refused instead.
   */
  private async forward<R extends Readable>(
    query: Outgoing<R>,
    transport: Transport,
    signal: AbortSignal | undefined,
    from?: Resume,
  ): Promise<Answered<R> | Result> {
    if (!from && this.opts.maxConcurrent > 0 && this.concurrent >= this.opts.maxConcurrent) {
      this.metrics.maxConcurrentRejects.inc();
      return {
        rcode: 5,
        error: new PluginError(this.name, `concurrent queries exceeded maximum ${this.opts.maxConcurrent}`),
      };
    }
    this.concurrent++;
    try {
      const list = from?.list ?? this.ordered();
      const deadline = from?.deadline ?? this.rt.now() + OVERALL_TIMEOUT_MS;
      const maxAttempts = 2 * list.length;
      let attempts = from ? 1 : 0;
      let fails = 0;
      let lastError: Error | undefined = from?.lastError;
      for (let i = from ? 1 : 0; this.rt.now() < deadline && attempts < maxAttempts && !signal?.aborted; ) {
        if (i >= list.length) {
          i = 0;
          fails = 0;
        }
        let upstream = list[i++] as Upstream;
        if (upstream.down(this.opts.maxFails)) {
          fails++;
          if (fails < this.upstreams.length) continue;
          this.metrics.healthcheckBroken.inc();
          if (this.opts.failfastAllUnhealthy) break;
          // Every upstream looks down: assume the health checks are what is broken.
          upstream = this.upstreams[this.rt.randomIndex(this.upstreams.length)] as Upstream;
        }
        let proto: "udp" | "tcp" =
          this.opts.forceTcp || (transport === "tcp" && !this.opts.preferUdp) ? "tcp" : "udp";
        try {
          let started = this.rt.now();
          let raw = await this.send(upstream, query, proto);
          let reply = this.read(upstream, query, raw, started);
          if (reply.tc && proto === "udp" && this.opts.preferUdp) {
            proto = "tcp";
            started = this.rt.now();
            raw = await this.send(upstream, query, proto);
            reply = this.read(upstream, query, raw, started);
          }
          return { reply, raw };
        } catch (err) {
          lastError = err instanceof Error ? err : new Error(String(err));
          if (this.opts.maxFails !== 0) upstream.healthcheck();
          attempts++;
          if (fails < this.upstreams.length) continue;
          break;
        }
      }
      return {
        rcode: 2,
        error: new PluginError(this.name, lastError ? lastError.message : "no healthy proxies", {
          cause: lastError,
        }),
      };
    } finally {
      this.concurrent--;
    }
  }

  /**
   * The first turn of `forward`'s loop for a relayed UDP query, without its async frames (the common
   * case: the first upstream is up and answers), or undefined where that turn could be anything else
   * (max_concurrent reached, the first upstream down, TCP, prefer_udp's retry of a truncated reply). A
   * failed exchange goes on in `forward` exactly where its loop would: the next upstream, one attempt
   * spent, the health check started.
   */
  private firstAttempt(query: WireQuery): Promise<Answered<ScannedReply> | Result> | undefined {
    const o = this.opts;
    if (o.forceTcp || o.preferUdp || (o.maxConcurrent > 0 && this.concurrent >= o.maxConcurrent))
      return undefined;
    const list = this.ordered();
    const upstream = list[0];
    if (!upstream || upstream.down(o.maxFails)) return undefined;
    const deadline = this.rt.now() + OVERALL_TIMEOUT_MS;
    const started = this.rt.now();
    this.concurrent++;
    const failed = (err: unknown) => {
      this.concurrent--;
      if (o.maxFails !== 0) upstream.healthcheck();
      const lastError = err instanceof Error ? err : new Error(String(err));
      return this.forward(query, "udp", undefined, { list, deadline, lastError });
    };
    return this.send(upstream, query, "udp").then((raw) => {
      let reply: ScannedReply;
      try {
        reply = this.read(upstream, query, raw, started);
      } catch (err) {
        return failed(err);
      }
      this.concurrent--;
      return { reply, raw };
    }, failed);
  }

  /** Sends the query to one upstream under a fresh random ID; settles with the reply's bytes. */
  private send<R extends Readable>(
    upstream: Upstream,
    query: Outgoing<R>,
    proto: "udp" | "tcp",
  ): Promise<Buffer> {
    const encoded = query.bytes(this.rt.randomId());
    const series = this.series.get(upstream) as UpstreamSeries;
    if (proto === "udp") return upstream.udp.exchange(encoded, READ_TIMEOUT_MS, series.udpTaken);
    // Every TCP exchange dials its own connection: a miss each time, as for CoreDNS without a cached one.
    series.connection("tcp", false);
    return exchange(upstream.to, encoded, proto, READ_TIMEOUT_MS, this.rt.timers);
  }

  /** Reads a reply (unreadable ones throw, failing the exchange) and records its duration. */
  private read<R extends Readable>(upstream: Upstream, query: Outgoing<R>, raw: Buffer, started: number): R {
    const reply = query.read(raw);
    if (!reply) throw new Error(`unreadable reply from ${upstream.addr}`);
    (this.series.get(upstream) as UpstreamSeries).duration(reply.rcode, (this.rt.now() - started) / 1000);
    return reply;
  }

  private matches(name: string): boolean {
    if (matchZone(name, this.fromZone) === undefined) return false;
    return this.opts.except.length === 0 || matchZone(name, this.opts.except) === undefined;
  }

  /** The upstreams in the order the policy tries them for this query. */
  private ordered(): readonly Upstream[] {
    if (this.opts.policy === "sequential" || this.upstreams.length === 1) return this.upstreams;
    const list = [...this.upstreams];
    if (this.opts.policy === "round_robin") {
      const start = this.rotation++ % list.length;
      return [...list.slice(start), ...list.slice(0, start)];
    }
    for (let i = list.length - 1; i > 0; i--) {
      const j = this.rt.randomIndex(i + 1);
      [list[i], list[j]] = [list[j] as Upstream, list[i] as Upstream];
    }
    return list;
  }
}
