import * as net from "node:net";
import type { CorefileError } from "../../corefile/errors.js";
import type { Stanza } from "../../corefile/parse.js";
import { parseDuration } from "../../plugin/pkg/duration.js";
import { argError, stanzaError } from "../../plugin/setup.js";
import { normalizeZone } from "../../plugin/zones.js";
import { rcodeName } from "../../wire/constants.js";
import type { HostPort } from "./exchange.js";

export type Policy = "random" | "round_robin" | "sequential";

export interface ForwardOptions {
  from: string;
  to: HostPort[];
  except: string[];
  forceTcp: boolean;
  preferUdp: boolean;
  expireMs: number;
  maxFails: number;
  maxConcurrent: number;
  policy: Policy;
  healthCheckMs: number;
  healthCheckRecursion: boolean;
  healthCheckDomain: string;
  /** Rcodes that hand the query to the next plugin instead of answering. */
  next: number[];
  failfastAllUnhealthy: boolean;
}

const PLUGIN = "forward";
const MAX_UPSTREAMS = 15;

/** Parses `forward FROM TO... { ... }`; TO may be a resolv.conf-style file, read through `readFile`. */
export function parseForward(stanza: Stanza, readFile: (path: string) => string): ForwardOptions {
  const [from, ...targets] = stanza.args;
  if (from === undefined || targets.length === 0) throw argError(stanza, PLUGIN);
  const opts = defaultOptions(normalizeZone(from), parseUpstreams(stanza, targets, readFile));
  for (const line of stanza.block) applyProperty(line, opts);
  return opts;
}

function fail(at: Stanza, message: string): CorefileError {
  return stanzaError(at, PLUGIN, message);
}

/** The TO addresses: IPs (optionally dns://, optionally with a port) and resolv.conf files. */
function parseUpstreams(
  stanza: Stanza,
  targets: readonly string[],
  readFile: (path: string) => string,
): HostPort[] {
  const to: HostPort[] = [];
  for (const target of targets) {
    if (target.startsWith("/") || target.startsWith(".")) {
      let text: string;
      try {
        text = readFile(target);
      } catch (err) {
        throw fail(stanza, `cannot read ${target}: ${(err as Error).message}`);
      }
      for (const ns of nameservers(text)) to.push({ host: ns, port: 53 });
      continue;
    }
    const hp = parseHostPort(target.replace(/^dns:\/\//, ""));
    if (!hp) throw fail(stanza, `not an IP address or file: '${target}'`);
    to.push(hp);
  }
  if (to.length === 0) throw fail(stanza, "no valid upstream addresses found");
  if (to.length > MAX_UPSTREAMS)
    throw fail(stanza, `more than ${MAX_UPSTREAMS} TOs configured: ${to.length}`);
  return to;
}

/** CoreDNS's defaults for everything the block may set. */
function defaultOptions(from: string, to: HostPort[]): ForwardOptions {
  return {
    from,
    to,
    except: [],
    forceTcp: false,
    preferUdp: false,
    expireMs: 10_000,
    maxFails: 2,
    maxConcurrent: 0,
    policy: "random",
    healthCheckMs: 500,
    healthCheckRecursion: true,
    healthCheckDomain: ".",
    next: [],
    failfastAllUnhealthy: false,
  };
}

/** One line of the `{ ... }` block, written into `opts`. */
function applyProperty(line: Stanza, opts: ForwardOptions): void {
  const a = line.args;
  const arity = (n: number) => {
    if (a.length !== n) throw argError(line, PLUGIN);
  };
  switch (line.name) {
    case "except":
      if (a.length === 0) throw argError(line, PLUGIN);
      opts.except = a.map(normalizeZone);
      break;
    case "force_tcp":
      arity(0);
      opts.forceTcp = true;
      break;
    case "prefer_udp":
      arity(0);
      opts.preferUdp = true;
      break;
    case "expire":
      arity(1);
      opts.expireMs = durationArg(line, a[0]);
      break;
    case "max_fails":
      arity(1);
      opts.maxFails = integerArg(line, a[0]);
      if (opts.maxFails < 0) throw fail(line, `max_fails can't be negative: ${opts.maxFails}`);
      break;
    case "max_concurrent":
      arity(1);
      opts.maxConcurrent = integerArg(line, a[0]);
      if (opts.maxConcurrent < 0) throw fail(line, `max_concurrent can't be negative: ${opts.maxConcurrent}`);
      break;
    case "policy":
      arity(1);
      if (a[0] !== "random" && a[0] !== "round_robin" && a[0] !== "sequential")
        throw fail(line, `unknown policy '${a[0]}'`);
      opts.policy = a[0];
      break;
    case "health_check":
      applyHealthCheck(line, opts);
      break;
    case "next":
      if (a.length === 0) throw argError(line, PLUGIN);
      opts.next = a.map((name) => {
        const code = rcodeNumber(name);
        if (code === undefined) throw fail(line, `${name} is not a valid rcode`);
        return code;
      });
      break;
    case "failfast_all_unhealthy_upstreams":
      arity(0);
      opts.failfastAllUnhealthy = true;
      break;
    default:
      throw fail(line, `unknown property '${line.name}'`);
  }
}

/** `health_check DURATION [no_rec] [domain NAME]`. */
function applyHealthCheck(line: Stanza, opts: ForwardOptions): void {
  const a = line.args;
  if (a.length < 1) throw argError(line, PLUGIN);
  opts.healthCheckMs = durationArg(line, a[0]);
  for (let i = 1; i < a.length; i++) {
    if (a[i] === "no_rec") opts.healthCheckRecursion = false;
    else if (a[i] === "domain" && a[i + 1] !== undefined)
      opts.healthCheckDomain = normalizeZone(a[++i] ?? ".");
    else throw fail(line, `health_check: unknown option ${a[i]}`);
  }
}

function integerArg(at: Stanza, text: string | undefined): number {
  if (text === undefined || !/^-?\d+$/.test(text)) throw fail(at, `invalid number '${text ?? ""}'`);
  return Number(text);
}

function durationArg(at: Stanza, text: string | undefined): number {
  const ms = parseDuration(text ?? "");
  if (ms === undefined) throw fail(at, `invalid duration '${text ?? ""}'`);
  return ms;
}

/** The `nameserver` lines of a resolv.conf. */
export function nameservers(text: string): string[] {
  return text
    .split("\n")
    .map((l) =>
      l
        .replace(/[#;].*$/, "")
        .trim()
        .split(/\s+/),
    )
    .filter((f) => f[0] === "nameserver" && f[1] !== undefined && net.isIP(f[1].replace(/%.*$/, "")) !== 0)
    .map((f) => (f[1] as string).replace(/%.*$/, ""));
}

function parseHostPort(text: string): HostPort | undefined {
  if (net.isIP(text)) return { host: text, port: 53 };
  const m = /^\[([^\]]+)\]:(\d+)$/.exec(text) ?? /^([^:]+):(\d+)$/.exec(text);
  if (!m?.[1] || !net.isIP(m[1]) || Number(m[2]) > 65535) return undefined;
  return { host: m[1], port: Number(m[2]) };
}

function rcodeNumber(name: string): number | undefined {
  for (let code = 0; code < 24; code++) if (rcodeName(code) === name.toUpperCase()) return code;
  return undefined;
}
