import type { CounterSeries } from "../../metrics/series.js";
import type {
  Handler,
  QueryContext,
  ResponseWriter,
  Result,
  WireAnswerContext,
} from "../../plugin/handler.js";
import { nextOrFailure } from "../../plugin/handler.js";
import { classify, matchesQuestion } from "../../plugin/pkg/response.js";
import { matchZone } from "../../plugin/zones.js";
import { decodeMessage } from "../../wire/decode.js";
import type { Message, Question, ResourceRecord } from "../../wire/message.js";
import { lowerName } from "../../wire/name.js";
import type { PeekedQuery } from "../../wire/peek.js";
import { cacheable, minimalTtl, storeFor } from "./classify.js";
import type { Entry } from "./entry.js";
import { newEntry, remaining, replyFromEntry, wireReplyFromEntry } from "./entry.js";
import type { CacheMetrics } from "./metrics.js";
import type { CacheOptions } from "./options.js";
import { passWire } from "./pass.js";
import { EntryStore } from "./store.js";

/** CoreDNS keys on the DO and CD bits, qtype, qclass and the lower-cased name. */
export function cacheKey(q: Question, dnssecOk: boolean, cd: boolean): string {
  return `${dnssecOk ? 1 : 0}${cd ? 1 : 0}/${q.type}/${q.class}/${lowerName(q.name)}`;
}

interface StoreMode {
  /** Write nothing to the client (prefetch and stale refreshes). */
  background: boolean;
  /** Ignore replies that are not a usable answer, so a failed refresh keeps the stale entry. */
  onlyUsable: boolean;
}

/**
 * `cache`: answers repeated questions from memory. Positive answers go to the success cache, NXDOMAIN,
 * NODATA and SERVFAIL to the denial cache. TTLs count down in served answers. The clock is injected.
 */
export class CacheHandler implements Handler {
  readonly name = "cache";
  readonly success: EntryStore;
  readonly denial: EntryStore;
  private readonly pending = new Set<Promise<void>>();
  private readonly zonesLabel: string;
  private readonly lookupSeries = new Map<string, LookupSeries>();

  constructor(
    private readonly next: Handler | undefined,
    private readonly opts: CacheOptions,
    private readonly now: () => number,
    private readonly metrics: CacheMetrics,
  ) {
    this.success = new EntryStore(opts.successCap);
    this.denial = new EntryStore(opts.denialCap);
    this.zonesLabel = opts.zones.join(",");
  }

  /** Resolves once every background refresh started so far has finished (tests use it). */
  async settled(): Promise<void> {
    while (this.pending.size > 0) await Promise.all([...this.pending]);
  }

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    if (!q || matchZone(q.name, this.opts.zones) === undefined)
      return nextOrFailure(this.name, this.next, ctx, w, r);
    const dnssecOk = r.edns?.dnssecOk ?? false;
    const key = cacheKey(q, dnssecOk, r.cd);
    const now = this.now();
    const entry = this.lookup(ctx, key, q, now);
    if (!entry) {
      return nextOrFailure(this.name, this.next, ctx, this.storing(ctx, r, key, w, NORMAL).writer, r);
    }
    const ttl = remaining(entry, now);
    const stale = ttl <= 0;
    if (stale) {
      if (this.opts.verifyStale) {
        const verifying = this.storing(ctx, r, key, w, { background: false, onlyUsable: true });
        const result = await nextOrFailure(this.name, this.next, ctx, verifying.writer, r);
        if (verifying.refreshed()) return result;
      } else {
        this.refresh(ctx, r, key, entry, true);
      }
      this.metrics.servedStale.inc(this.labels(ctx));
    } else if (this.shouldPrefetch(entry, now, ttl)) {
      this.refresh(ctx, r, key, entry, false);
    }
    let served = ttl;
    if (stale && this.opts.staleTtl > 0) served = this.opts.staleTtl;
    else if (this.opts.keepTtl) served = entry.origTtl;
    else if (stale) served = 0;
    const reply = replyFromEntry(entry, r, served, dnssecOk || r.ad);
    w.write(reply.message, reply.wire);
    return { rcode: 0 };
  }

  /** CoreDNS's getIfNotStale: denial first (a SERVFAIL yields to a live positive), then success. */
  private lookup(ctx: QueryContext, key: string, q: Question, now: number): Entry | undefined {
    const counted = this.counted(ctx.server);
    counted.requests.value++;
    const entry = this.find(key, q.type, q.class, lowerName(q.name), now);
    if (entry) {
      this.countHit(counted, ctx.server, storeFor(entry.kind));
    } else {
      counted.misses ??= this.metrics.misses.series(this.labels(ctx));
      counted.misses.value++;
    }
    return entry;
  }

  /** Series appear with their first increment, as CoreDNS's do. */
  private countHit(counted: LookupSeries, server: string, type: "success" | "denial"): void {
    const series = counted[type] ?? this.metrics.hits.series({ ...this.labels({ server }), type });
    counted[type] = series;
    series.value++;
  }

  /** The lookup counters of one server, resolved once. */
  private counted(server: string): LookupSeries {
    let c = this.lookupSeries.get(server);
    if (!c) {
      c = { requests: this.metrics.requests.series(this.labels({ server })) };
      this.lookupSeries.set(server, c);
    }
    return c;
  }

  private find(key: string, qtype: number, qclass: number, lname: string, now: number): Entry | undefined {
    const usable = (e: Entry | undefined): e is Entry => {
      if (!e || e.qtype !== qtype || e.qclass !== qclass || e.lowerName !== lname) return false;
      const ttl = remaining(e, now);
      return ttl > 0 || (this.opts.staleUpToMs > 0 && -ttl < this.opts.staleUpToMs / 1000);
    };
    const negative = this.denial.get(key);
    const positive = this.success.get(key);
    if (usable(negative) && !(negative.kind === "servfail" && usable(positive))) return negative;
    if (usable(positive)) return positive;
    return undefined;
  }

  /**
   * A hit answered from the query's bytes. Misses, stale entries and replies too big for the client
   * return undefined before anything is counted, so `serveDNS` then does all of it.
   */
  answerFromWire(q: PeekedQuery, ctx: WireAnswerContext): Buffer | undefined {
    if (matchZone(q.name, this.opts.zones) === undefined) return undefined;
    if (this.neverStored(q.name)) return this.passFromWire(q, ctx);
    const key = `${q.dnssecOk ? 1 : 0}${q.flags & 0x10 ? 1 : 0}/${q.qtype}/${q.qclass}/${q.name}`;
    const now = this.now();
    const entry = this.find(key, q.qtype, q.qclass, q.name, now);
    if (!entry) return undefined;
    const ttl = remaining(entry, now);
    if (ttl <= 0 || entry.wire.length + ctx.reserve > ctx.limit) return undefined;
    const counted = this.counted(ctx.server);
    counted.requests.value++;
    this.countHit(counted, ctx.server, storeFor(entry.kind));
    if (this.shouldPrefetch(entry, now, ttl)) {
      const decoded = decodeMessage(q.packet);
      if (decoded.kind === "message") this.refresh(ctx, decoded.message, key, entry, false);
    }
    return wireReplyFromEntry(entry, q, this.opts.keepTtl ? entry.origTtl : ttl, ctx.reserve);
  }

  /** Whether no reply for `name` is ever stored: `disable success` and `disable denial` both cover it. */
  private neverStored(name: string): boolean {
    const o = this.opts;
    return (
      o.successExcept.length > 0 &&
      o.denialExcept.length > 0 &&
      matchZone(name, o.successExcept) !== undefined &&
      matchZone(name, o.denialExcept) !== undefined
    );
  }

  /**
   * A name nothing is kept for (kubeadm's Corefile disables both caches for cluster.local) always misses,
   * so the rest of the chain may answer it from bytes (the kubernetes plugin's kept replies). The reply
   * gets what serveDNS's writer gives a reply it does not store (passWire), and the miss is counted.
   */
  private passFromWire(q: PeekedQuery, ctx: WireAnswerContext): Buffer | undefined {
    const reply = this.next?.answerFromWire?.(q, ctx);
    if (!reply) return undefined;
    const showAd = q.dnssecOk || (q.flags & 0x20) !== 0;
    if (!passWire(reply, reply.length - ctx.reserve, q.qtype, this.opts, showAd)) return undefined;
    const counted = this.counted(ctx.server);
    counted.requests.value++;
    counted.misses ??= this.metrics.misses.series(this.labels(ctx));
    counted.misses.value++;
    return reply;
  }

  private shouldPrefetch(e: Entry, now: number, ttl: number): boolean {
    if (this.opts.prefetch <= 0) return false;
    // Hits count only while they come closer together than the prefetch window.
    e.hits = now - e.lastHit > this.opts.prefetchWindowMs ? 1 : e.hits + 1;
    e.lastHit = now;
    const threshold = Math.ceil((this.opts.prefetchPercent / 100) * e.origTtl);
    return e.hits >= this.opts.prefetch && ttl <= threshold;
  }

  /** Refreshes an entry in the background, at most once at a time per entry. */
  private refresh(
    ctx: QueryContext | WireAnswerContext,
    r: Message,
    key: string,
    entry: Entry,
    stale: boolean,
  ): void {
    if (entry.refreshing) return;
    entry.refreshing = true;
    this.metrics.prefetch.inc(this.labels(ctx));
    const background: QueryContext = { zone: ctx.zone, server: ctx.server };
    if ("signal" in ctx && ctx.signal) Object.assign(background, { signal: ctx.signal });
    const storing = this.storing(ctx, r, key, undefined, { background: true, onlyUsable: stale });
    const job = nextOrFailure(this.name, this.next, background, storing.writer, r)
      .then(() => {
        // The new entry inherits the hit count, or prefetching would stop after one round.
        const fresh = this.denial.get(key) ?? this.success.get(key);
        if (fresh && fresh !== entry) {
          fresh.hits = entry.hits;
          fresh.lastHit = entry.lastHit;
        }
      })
      .catch(() => undefined)
      .finally(() => {
        entry.refreshing = false;
        this.pending.delete(job);
      });
    this.pending.add(job);
  }

  /** A writer that rewrites TTLs, stores what may be stored, and passes the reply on. */
  private storing(
    ctx: QueryContext,
    r: Message,
    key: string,
    target: ResponseWriter | undefined,
    mode: StoreMode,
  ): { writer: ResponseWriter; refreshed: () => boolean } {
    const q = r.question[0] as Question;
    const dnssecOk = r.edns?.dnssecOk ?? false;
    let refreshed = false;
    const writer: ResponseWriter = {
      transport: target?.transport ?? "tcp",
      remote: target?.remote ?? { address: "", port: 0, family: "IPv4" },
      write: (msg) => {
        const kind = classify(msg);
        if (mode.onlyUsable && (msg.tc || !matchesQuestion(q, msg) || (msg.rcode !== 0 && msg.rcode !== 3)))
          return;
        refreshed = true;
        const ttl = this.entryTtl(msg, kind);
        const retime = (rrs: readonly ResourceRecord[]) => rrs.map((rr) => ({ ...rr, ttl }));
        const out: Message = {
          ...msg,
          answer: retime(msg.answer),
          authority: retime(msg.authority),
          additional: retime(msg.additional),
        };
        if (!dnssecOk && !r.ad) out.ad = false;
        let wire: Buffer | undefined;
        if (cacheable(msg, kind) && ttl > 0) {
          if (matchesQuestion(q, msg)) wire = this.store(ctx, key, out, kind, ttl, mode.background);
          else this.metrics.drops.inc(this.labels(ctx));
        }
        if (!mode.background) target?.write(out, wire);
      },
    };
    return { writer, refreshed: () => refreshed };
  }

  private entryTtl(msg: Message, kind: ReturnType<typeof classify>): number {
    const o = this.opts;
    if (kind === "servfail") return o.servfailTtl;
    const denial = kind === "nxdomain" || kind === "nodata";
    const max = denial ? o.denialMaxTtl : o.successMaxTtl;
    const min = denial ? o.denialMinTtl : o.successMinTtl;
    return Math.min(Math.max(minimalTtl(msg, kind, max), min), max);
  }

  /** Stores a reply; returns its encoding when it went into a cache. */
  private store(
    ctx: QueryContext,
    key: string,
    msg: Message,
    kind: ReturnType<typeof classify>,
    ttl: number,
    background: boolean,
  ): Buffer | undefined {
    const type = storeFor(kind);
    const name = msg.question[0]?.name ?? ".";
    const except = type === "success" ? this.opts.successExcept : this.opts.denialExcept;
    if (matchZone(name, except) !== undefined) return undefined;
    const entry = newEntry(msg, kind, ttl, this.now());
    const store = type === "success" ? this.success : this.denial;
    const labels = this.labels(ctx);
    if (store.add(key, entry)) this.metrics.evictions.inc({ ...labels, type });
    // A refreshed positive answer replaces whatever negative one was kept for the same key.
    if (type === "success" && background) this.denial.remove(key);
    this.metrics.entries.set({ ...labels, type: "success" }, this.success.size);
    this.metrics.entries.set({ ...labels, type: "denial" }, this.denial.size);
    return entry.wire;
  }

  private labels(ctx: { server: string }): { server: string; zones: string; view: string } {
    return { server: ctx.server, zones: this.zonesLabel, view: "" };
  }
}

interface LookupSeries {
  requests: CounterSeries;
  misses?: CounterSeries;
  success?: CounterSeries;
  denial?: CounterSeries;
}

const NORMAL: StoreMode = { background: false, onlyUsable: false };
