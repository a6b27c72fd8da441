import { createHash } from "node:crypto";
import type { Metrics } from "../../metrics/metrics.js";
import type { Setup } from "../../plugin/setup.js";
import { argError, onlyOnce, stanzaError } from "../../plugin/setup.js";
import type { Timers } from "../../server/timers.js";
import { systemTimers } from "../../server/timers.js";
import { parseDuration } from "../kubernetes/setup.js";

export interface ReloadDeps {
  timers?: Timers;
  /** Reads the Corefile as it is now; without it `reload` has nothing to watch. */
  corefileText?: () => string;
  /** Builds and swaps in a new Corefile; rejects (and keeps the old one) when it is bad. */
  applyCorefile?: (text: string) => Promise<void>;
  /** Where reload failures are logged. */
  errorLog?: (line: string) => void;
  /** A number in [0, 1) for the jitter. */
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

/**
 * `reload [INTERVAL] [JITTER]` (default 30s and 15s): rereads the Corefile every INTERVAL ± JITTER and
 * applies it when its hash changed. A bad new Corefile is logged and the running one kept.
 */
export const setupReload: Setup<ReloadDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, "reload");
  if (stanza.args.length > 2 || stanza.block.length > 0) throw argError(stanza, "reload");
  const interval = parseDuration(stanza.args[0] ?? "30s");
  if (interval === undefined || interval < 2000)
    throw stanzaError(stanza, "reload", `interval value must be greater or equal to 2s: '${stanza.args[0]}'`);
  const jitter = parseDuration(stanza.args[1] ?? `${interval / 2000}s`);
  if (jitter === undefined || jitter < 1000 || jitter > interval / 2)
    throw stanzaError(
      stanza,
      "reload",
      `jitter value must be between 1s and half the interval: '${stanza.args[1]}'`,
    );
  const { corefileText, applyCorefile } = ctx.deps;
  if (!corefileText || !applyCorefile) return {};
  const timers = ctx.deps.timers ?? systemTimers;
  const random = ctx.deps.random ?? ((n: number) => Math.floor(Math.random() * n));
  const log = ctx.deps.errorLog ?? ((line: string) => console.error(line));
  const counted = reloadMetrics(ctx.deps.metrics);
  let timer: unknown;
  let current = "";
  let stopped = false;
  const schedule = () => {
    if (stopped) return;
    const spread = Math.floor(jitter);
    timer = timers.setTimeout(() => void check(), interval - spread + random(2 * spread + 1));
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
