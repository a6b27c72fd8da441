import { createHash } from "node:crypto";
import { formatGoDuration, goDurationError, parseGoDuration } from "@switchyard/basics";
import type { Stanza } from "../../corefile/parse.js";
import type { Metrics } from "../../metrics/metrics.js";
import { PluginError } from "../../plugin/handler.js";
import type { Setup } from "../../plugin/setup.js";
import { argError } from "../../plugin/setup.js";
import type { Timers } from "../../server/timers.js";
import { systemTimers } from "../../server/timers.js";

export interface ReloadDeps {
  timers?: Timers;
  /** Reads the Corefile as it is now; without it `reload` has nothing to watch. */
  corefileText?: () => string;
  /** Builds and swaps in a new Corefile; rejects (and keeps the old one) when it is bad. */
  applyCorefile?: (text: string) => Promise<void>;
  /** Where reload failures are logged. */
  errorLog?: (line: string) => void;
  /** A whole number in [0, n), for the jitter. */
  random?: (n: number) => number;
  /** Where `coredns_reload_failed_total` and `coredns_reload_version_info` live. */
  metrics?: Metrics;
}

/** CoreDNS's two reload metrics: failed attempts, and the hash of the Corefile last tried. */
function reloadMetrics(metrics: Metrics | undefined) {
  const failed = metrics?.counter(
    "coredns_reload_failed_total",
    "Counter of the number of failed reload attempts.",
  );
  const info = metrics?.gauge(
    "coredns_reload_version_info",
    "A metric with a constant '1' value labeled by hash, and value which type of hash generated.",
    ["hash", "value"],
    "first",
  );
  return {
    failed: () => failed?.inc(),
    /** Labelled as CoreDNS labels it: `hash` holds the algorithm's name, `value` the digest. */
    version: (previous: string, next: string) => {
      if (previous) info?.remove({ hash: "sha512", value: previous });
      if (next) info?.set({ hash: "sha512", value: next }, 1);
    },
  };
}

/** SHA-512 of the Corefile text, as CoreDNS compares it. */
export function corefileHash(text: string): string {
  return createHash("sha512").update(text).digest("hex");
}

const MIN_INTERVAL_MS = 2000;
const MIN_JITTER_MS = 1000;

/**
 * `reload [INTERVAL] [JITTER]` as CoreDNS reads it: only the first `reload` line of a block counts and a block
 * after it is ignored; JITTER (default 15s, 0 for none) is cut to half of INTERVAL (default 30s). Errors are
 * upstream's: the duration parser's text, or the limits, without a position.
 */
export function parseReload(stanza: Stanza): { intervalMs: number; jitterMs: number } {
  if (stanza.args.length > 2) throw argError({ ...stanza, name: stanza.args.at(-1) ?? "" }, "reload");
  const duration = (text: string | undefined, fallback: number) => {
    if (text === undefined) return fallback;
    const ms = parseGoDuration(text);
    if (ms === undefined) throw new PluginError("reload", goDurationError(text));
    return ms;
  };
  const intervalMs = duration(stanza.args[0], 30_000);
  if (intervalMs < MIN_INTERVAL_MS)
    throw new PluginError(
      "reload",
      `interval value must be greater or equal to ${formatGoDuration(MIN_INTERVAL_MS)}`,
    );
  const jitterMs = duration(stanza.args[1], 15_000);
  if (jitterMs !== 0 && jitterMs < MIN_JITTER_MS)
    throw new PluginError(
      "reload",
      `jitter value must be 0 or greater or equal to ${formatGoDuration(MIN_JITTER_MS)}`,
    );
  return { intervalMs, jitterMs: Math.min(jitterMs, intervalMs / 2) };
}

/**
 * Rereads the Corefile every INTERVAL, moved once at setup by up to half of JITTER either way (so that servers
 * started together spread their checks, as CoreDNS does), and applies it when its hash changed. A bad new
 * Corefile is logged and the running one kept.
 */
export const setupReload: Setup<ReloadDeps> = (ctx) => {
  const stanza = ctx.stanzas[0];
  if (!stanza) throw new Error("setup for reload called without a stanza");
  const { intervalMs, jitterMs } = parseReload(stanza);
  const { corefileText, applyCorefile } = ctx.deps;
  if (!corefileText || !applyCorefile) return {};
  const timers = ctx.deps.timers ?? systemTimers;
  const random = ctx.deps.random ?? ((n: number) => Math.floor(Math.random() * n));
  const spread = Math.floor(jitterMs);
  const period = spread > 0 ? intervalMs + random(spread) - Math.floor(spread / 2) : intervalMs;
  const log = ctx.deps.errorLog ?? ((line: string) => console.error(line));
  const counted = reloadMetrics(ctx.deps.metrics);
  let timer: unknown;
  let current = "";
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    timer = timers.setTimeout(() => void check(), period);
  };
  const check = async () => {
    try {
      const text = corefileText();
      const hash = corefileHash(text);
      if (hash !== current) {
        counted.version(current, hash);
        current = hash;
        await applyCorefile(text).catch((err: Error) => {
          counted.failed();
          throw err;
        });
      }
    } catch (err) {
      log(`[ERROR] plugin/reload: ${(err as Error).message}`);
    }
    schedule();
  };
  ctx.lifecycle.onStartup(() => {
    try {
      // CoreDNS labels the version only once a changed Corefile was tried, never at startup.
      current = corefileHash(corefileText());
    } catch {
      current = "";
    }
    schedule();
  });
  ctx.lifecycle.onShutdown(() => {
    stopped = true;
    timers.clearTimeout(timer);
  });
  return {};
};
