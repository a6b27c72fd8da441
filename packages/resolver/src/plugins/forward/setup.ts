import { getRandomValues, randomInt } from "node:crypto";
import { readFileSync } from "node:fs";
import { Metrics } from "../../metrics/metrics.js";
import type { Setup } from "../../plugin/setup.js";
import type { Timers } from "../../server/timers.js";
import { systemTimers } from "../../server/timers.js";
import { ForwardHandler, forwardMetrics } from "./handler.js";
import { parseForward } from "./options.js";
import { Upstream } from "./upstream.js";

export interface ForwardDeps {
  metrics?: Metrics;
  timers?: Timers;
  /** Reads a resolv.conf named as a forward target; default the real file. */
  readResolvConf?: (path: string) => string;
  /** A 16-bit query ID; default a cryptographic random one. */
  randomId?: () => number;
}

/**
 * Cryptographically random 16-bit query IDs (as miekg/dns's Id), drawn from the system's generator 4096 at
 * a time instead of one call per query.
 */
function randomIds(): () => number {
  const batch = new Uint16Array(4096);
  let next = batch.length;
  return () => {
    if (next === batch.length) {
      getRandomValues(batch);
      next = 0;
    }
    return batch[next++] as number;
  };
}

/** `forward FROM TO...`; several forward stanzas in one block chain into each other (for `next`). */
export const setupForward: Setup<ForwardDeps> = (ctx) => {
  const metrics = forwardMetrics(ctx.deps.metrics ?? new Metrics());
  const timers = ctx.deps.timers ?? systemTimers;
  const randomId = ctx.deps.randomId ?? randomIds();
  const readFile = ctx.deps.readResolvConf ?? ((p: string) => readFileSync(p, "utf8"));
  const parsed = ctx.stanzas.map((s) => parseForward(s, readFile));
  // As in CoreDNS, a server with `forward` serves CH and other classes instead of refusing them.
  ctx.server.anyClass = true;
  const all: Upstream[] = [];
  const handlers = parsed.map((opts) => {
    const upstreams = opts.to.map(
      (to) =>
        new Upstream(
          to,
          {
            intervalMs: opts.healthCheckMs,
            recursionDesired: opts.healthCheckRecursion,
            domain: opts.healthCheckDomain,
            forceTcp: opts.forceTcp,
          },
          timers,
          randomId,
          (addr) => metrics.healthcheckFailures.inc({ proxy_name: "forward", to: addr }),
          opts.expireMs,
        ),
    );
    all.push(...upstreams);
    return { opts, upstreams };
  });
  ctx.lifecycle.onShutdown(() => {
    for (const u of all) u.stop();
  });
  const runtime = {
    timers,
    now: () => performance.now(),
    randomId,
    randomIndex: (n: number) => randomInt(n),
  };
  return {
    plugin: (next) => {
      let chain = next;
      for (const { opts, upstreams } of [...handlers].reverse())
        chain = new ForwardHandler(chain, opts, upstreams, runtime, metrics);
      return chain as ForwardHandler;
    },
  };
};
