import type { Metrics } from "../../metrics/metrics.js";
import { TIME_BUCKETS } from "../../metrics/metrics.js";
import type { CounterFamily, HistogramFamily } from "../../metrics/series.js";
import type { Handler, QueryContext, ResponseWriter, Result } from "../../plugin/handler.js";
import { nextOrFailure, PluginError } from "../../plugin/handler.js";
import { matchZone } from "../../plugin/zones.js";
import type { Timers } from "../../server/timers.js";
import { rcodeName } from "../../wire/constants.js";
import { decodeMessage } from "../../wire/decode.js";
import { encodeMessage } from "../../wire/encode.js";
import type { Message } from "../../wire/message.js";
import { replyTo } from "../../wire/message.js";
import { matchesQuestion } from "../cache/classify.js";
import { exchange } from "./exchange.js";
import type { ForwardOptions } from "./options.js";
import type { Upstream } from "./upstream.js";

/** CoreDNS gives up on a query after 5 s, and waits 2 s for each upstream reply. */
const OVERALL_TIMEOUT_MS = 5000;
const READ_TIMEOUT_MS = 2000;

export interface ForwardMetrics {
  duration: HistogramFamily;
  connCacheHits: CounterFamily;
  connCacheMisses: CounterFamily;
  healthcheckFailures: CounterFamily;
  healthcheckBroken: CounterFamily;
  maxConcurrentRejects: CounterFamily;
}

export function forwardMetrics(m: Metrics): ForwardMetrics {
  return {
    duration: m.histogram(
      "coredns_proxy_request_duration_seconds",
      "Histogram of the time each request took.",
      ["proxy_name", "to", "rcode"],
      TIME_BUCKETS,
    ),
    connCacheHits: m.counter(
      "coredns_proxy_conn_cache_hits_total",
      "Counter of connection cache hits per upstream and protocol.",
      ["proxy_name", "to", "proto"],
    ),
    connCacheMisses: m.counter(
      "coredns_proxy_conn_cache_misses_total",
      "Counter of connection cache misses per upstream and protocol.",
      ["proxy_name", "to", "proto"],
    ),
    healthcheckFailures: m.counter(
      "coredns_proxy_healthcheck_failures_total",
      "Counter of the number of failed healthchecks.",
      ["proxy_name", "to"],
    ),
    healthcheckBroken: m.counter(
      "coredns_forward_healthcheck_broken_total",
      "Counter of the number of complete failures of the healthchecks.",
    ),
    maxConcurrentRejects: m.counter(
      "coredns_forward_max_concurrent_rejects_total",
      "Counter of the number of queries rejected because the concurrent queries were at maximum.",
    ),
  };
}

export interface ForwardRuntime {
  timers: Timers;
  /** Monotonic milliseconds. */
  now: () => number;
  randomId: () => number;
  /** An index in [0, n). */
  randomIndex: (n: number) => number;
}

/**
 * `forward`: sends queries to upstream servers and relays their answers. Upstreams are tried in policy
 * order, skipping those marked down by health checks, until one answers or 5 s have passed.
 */
export class ForwardHandler implements Handler {
  readonly name = "forward";
  private concurrent = 0;
  private rotation = 0;

  constructor(
    private readonly next: Handler | undefined,
    private readonly opts: ForwardOptions,
    private readonly upstreams: readonly Upstream[],
    private readonly rt: ForwardRuntime,
    private readonly metrics: ForwardMetrics,
  ) {}

  async serveDNS(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const q = r.question[0];
    if (!q || !this.matches(q.name)) return nextOrFailure(this.name, this.next, ctx, w, r);
    if (this.opts.maxConcurrent > 0 && this.concurrent >= this.opts.maxConcurrent) {
      this.metrics.maxConcurrentRejects.inc();
      return {
        rcode: 5,
        error: new PluginError(this.name, `concurrent queries exceeded maximum ${this.opts.maxConcurrent}`),
      };
    }
    this.concurrent++;
    try {
      return await this.forward(ctx, w, r);
    } finally {
      this.concurrent--;
    }
  }

  private async forward(ctx: QueryContext, w: ResponseWriter, r: Message): Promise<Result> {
    const list = this.ordered();
    const deadline = this.rt.now() + OVERALL_TIMEOUT_MS;
    const maxAttempts = 2 * list.length;
    let attempts = 0;
    let fails = 0;
    let lastError: Error | undefined;
    for (let i = 0; this.rt.now() < deadline && attempts < maxAttempts && !ctx.signal?.aborted; ) {
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
        this.opts.forceTcp || (w.transport === "tcp" && !this.opts.preferUdp) ? "tcp" : "udp";
      let reply: Message;
      let raw: Buffer;
      try {
        ({ reply, raw } = await this.ask(upstream, r, proto));
        if (reply.tc && proto === "udp" && this.opts.preferUdp) {
          proto = "tcp";
          ({ reply, raw } = await this.ask(upstream, r, proto));
        }
      } catch (err) {
        lastError = err instanceof Error ? err : new Error(String(err));
        if (this.opts.maxFails !== 0) upstream.healthcheck();
        attempts++;
        if (fails < this.upstreams.length) continue;
        break;
      }
      if (!matchesQuestion(r.question[0] as (typeof r.question)[0], reply)) {
        w.write(replyTo(r, 1));
        return { rcode: 0 };
      }
      if (this.opts.next.includes(reply.rcode) && this.next)
        return nextOrFailure(this.name, this.next, ctx, w, r);
      // Without an OPT record of the upstream's to drop, its bytes are the reply: only the ID differs.
      const wire = reply.edns === undefined && reply.rcode <= 0xf ? Buffer.from(raw) : undefined;
      wire?.writeUInt16BE(r.id, 0);
      w.write({ ...reply, id: r.id }, wire);
      return { rcode: 0 };
    }
    return {
      rcode: 2,
      error: new PluginError(this.name, lastError ? lastError.message : "no healthy proxies", {
        cause: lastError,
      }),
    };
  }

  /** One exchange with one upstream, under a fresh random ID. */
  private async ask(
    upstream: Upstream,
    r: Message,
    proto: "udp" | "tcp",
  ): Promise<{ reply: Message; raw: Buffer }> {
    const started = this.rt.now();
    const query: Message = { ...r, id: this.rt.randomId() };
    // Without EDNS from the client, still offer the upstream 512 bytes at least (miekg's default).
    const encoded = encodeMessage(query);
    const labels = { proxy_name: this.name, to: upstream.addr, proto };
    const taken = (reused: boolean) =>
      (reused ? this.metrics.connCacheHits : this.metrics.connCacheMisses).inc(labels);
    // Every TCP exchange dials its own connection: a miss each time, as for CoreDNS without a cached one.
    if (proto === "tcp") taken(false);
    const wire =
      proto === "udp"
        ? await upstream.udp.exchange(encoded, READ_TIMEOUT_MS, taken)
        : await exchange(upstream.to, encoded, proto, READ_TIMEOUT_MS, this.rt.timers);
    const d = decodeMessage(wire);
    if (d.kind !== "message") throw new Error(`unreadable reply from ${upstream.addr}`);
    this.metrics.duration.observe(
      { proxy_name: this.name, to: upstream.addr, rcode: rcodeName(d.message.rcode) },
      (this.rt.now() - started) / 1000,
    );
    return { reply: d.message, raw: wire };
  }

  private matches(name: string): boolean {
    if (matchZone(name, [this.opts.from]) === undefined) return false;
    return matchZone(name, this.opts.except) === undefined;
  }

  /** The upstreams in the order the policy tries them for this query. */
  private ordered(): Upstream[] {
    const list = [...this.upstreams];
    if (this.opts.policy === "sequential") return list;
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
