import type { Stanza } from "../../corefile/parse.js";
import { PluginError } from "../../plugin/handler.js";
import { parseDuration } from "../../plugin/pkg/duration.js";
import { argError, stanzaError } from "../../plugin/setup.js";
import { normalizeZone } from "../../plugin/zones.js";

export interface CacheOptions {
  zones: string[];
  successCap: number;
  /** Seconds. */
  successMaxTtl: number;
  successMinTtl: number;
  denialCap: number;
  denialMaxTtl: number;
  denialMinTtl: number;
  /** Seconds a SERVFAIL/NOTIMP is kept; 0 keeps none. */
  servfailTtl: number;
  /** Hits needed before an entry is refreshed ahead of expiry; 0 turns prefetch off. */
  prefetch: number;
  prefetchWindowMs: number;
  prefetchPercent: number;
  /** How long past expiry an entry may still be served; 0 turns serve_stale off. */
  staleUpToMs: number;
  verifyStale: boolean;
  /** TTL of a stale answer, in seconds (0 by default). */
  staleTtl: number;
  successExcept: string[];
  denialExcept: string[];
  keepTtl: boolean;
}

const PLUGIN = "cache";

/** Parses `cache [TTL] [ZONES...] { ... }` (CoreDNS v1.14.7 syntax and defaults). */
export function parseCache(stanza: Stanza, blockZones: readonly string[]): CacheOptions {
  const opts: CacheOptions = {
    zones: [...blockZones],
    successCap: 10000,
    successMaxTtl: 3600,
    successMinTtl: 5,
    denialCap: 10000,
    denialMaxTtl: 1800,
    denialMinTtl: 5,
    servfailTtl: 5,
    prefetch: 0,
    prefetchWindowMs: 60_000,
    prefetchPercent: 10,
    staleUpToMs: 0,
    verifyStale: false,
    staleTtl: 0,
    successExcept: [],
    denialExcept: [],
    keepTtl: false,
  };
  const fail = (at: Stanza, message: string) => stanzaError(at, PLUGIN, message);
  // Upstream returns these as plain errors, without a position.
  const plain = (message: string) => new PluginError(PLUGIN, message);
  let args = stanza.args;
  if (args[0] !== undefined && /^-?\d+$/.test(args[0])) {
    const ttl = Number(args[0]);
    if (ttl <= 0) throw plain(`cache TTL can not be zero or negative: ${ttl}`);
    opts.successMaxTtl = ttl;
    opts.denialMaxTtl = ttl;
    args = args.slice(1);
  }
  if (args.length > 0) opts.zones = args.map(normalizeZone);
  const int = (at: Stanza, text: string | undefined) => {
    if (text === undefined || !/^-?\d+$/.test(text)) throw fail(at, `invalid number '${text ?? ""}'`);
    return Number(text);
  };
  const duration = (at: Stanza, text: string | undefined) => {
    const ms = parseDuration(text ?? "");
    if (ms === undefined) throw fail(at, `invalid duration '${text ?? ""}'`);
    return ms;
  };
  for (const line of stanza.block) {
    const a = line.args;
    switch (line.name) {
      case "success":
      case "denial": {
        if (a.length === 0 || a.length > 3) throw argError(line, PLUGIN);
        const cap = int(line, a[0]);
        const max = a[1] === undefined ? undefined : int(line, a[1]);
        const min = a[2] === undefined ? undefined : int(line, a[2]);
        if (max !== undefined && max <= 0) throw plain(`cache TTL can not be zero or negative: ${max}`);
        if (min !== undefined && min < 0) throw plain(`cache min TTL can not be negative: ${min}`);
        if (line.name === "success") {
          opts.successCap = cap;
          opts.successMaxTtl = max ?? opts.successMaxTtl;
          opts.successMinTtl = min ?? opts.successMinTtl;
        } else {
          opts.denialCap = cap;
          opts.denialMaxTtl = max ?? opts.denialMaxTtl;
          opts.denialMinTtl = min ?? opts.denialMinTtl;
        }
        break;
      }
      case "prefetch": {
        if (a.length === 0 || a.length > 3) throw argError(line, PLUGIN);
        opts.prefetch = int(line, a[0]);
        if (opts.prefetch < 0) throw plain(`prefetch amount should be positive: ${opts.prefetch}`);
        if (a[1] !== undefined) opts.prefetchWindowMs = duration(line, a[1]);
        if (a[2] !== undefined) {
          const m = /^(\d+)%$/.exec(a[2]);
          if (!m) throw fail(line, `prefetch percentage must end in '%': ${a[2]}`);
          const pct = Number(m[1]);
          if (pct < 10 || pct > 90) throw plain(`percentage should fall in range [10, 90]: ${pct}`);
          opts.prefetchPercent = pct;
        }
        break;
      }
      case "serve_stale": {
        if (a.length > 4) throw argError(line, PLUGIN);
        opts.staleUpToMs = a[0] === undefined ? 3_600_000 : duration(line, a[0]);
        const mode = a[1]?.toLowerCase();
        if (mode !== undefined && mode !== "immediate" && mode !== "verify")
          throw plain(`invalid value for serve_stale refresh mode: ${a[1]}`);
        opts.verifyStale = mode === "verify";
        // verify takes a timeout before the response TTL; immediate takes the TTL directly.
        const ttlArg = opts.verifyStale ? a[3] : a[2];
        if (opts.verifyStale && a[2] !== undefined) duration(line, a[2]);
        if (ttlArg !== undefined) {
          const ms = duration(line, ttlArg);
          if (ms % 1000 !== 0) throw fail(line, "serve_stale response TTL must be a whole number of seconds");
          opts.staleTtl = ms / 1000;
        }
        break;
      }
      case "servfail": {
        if (a.length !== 1) throw argError(line, PLUGIN);
        const ms = duration(line, a[0]);
        if (ms > 300_000) throw fail(line, "caching SERVFAIL responses over 5 minutes is not permitted");
        opts.servfailTtl = Math.trunc(ms / 1000);
        break;
      }
      case "disable": {
        if (a.length < 1) throw argError(line, PLUGIN);
        const zones = a.length > 1 ? a.slice(1).map(normalizeZone) : ["."];
        if (a[0] === "success") opts.successExcept = zones;
        else if (a[0] === "denial") opts.denialExcept = zones;
        else throw fail(line, `cache type for disable must be "success" or "denial"`);
        break;
      }
      case "keepttl":
        if (a.length !== 0) throw argError(line, PLUGIN);
        opts.keepTtl = true;
        break;
      default:
        throw fail(line, `unknown property '${line.name}'`);
    }
  }
  return opts;
}
