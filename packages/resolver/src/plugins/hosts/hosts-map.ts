import { goIPString, isIPv4Mapped, parseGoIP } from "@switchyard/basics";
import { matchZone } from "../../plugin/zones.js";
import { fqdn } from "../../wire/name.js";

/** One parsed hosts text: names to addresses per family, wildcard owners apart, and addresses to names. */
export interface HostsMap {
  name4: Map<string, string[]>;
  name6: Map<string, string[]>;
  wild4: Map<string, string[]>;
  wild6: Map<string, string[]>;
  /** Address text (Go's IP.String()) to the names that gave it, for PTR. */
  addr: Map<string, string[]>;
}

export interface ParseHostsOptions {
  /** Names outside these zones are left out entirely. */
  origins: readonly string[];
  /** Whether non-wildcard names also get a reverse (PTR) entry. */
  autoReverse: boolean;
}

/** Go's bufio.Scanner gives up on a line this long, so the rest of the text is never read. */
const MAX_LINE_BYTES = 64 * 1024;

/** Go's bytes.Fields splits on unicode.IsSpace, which differs from JS's \s (U+0085 yes, U+FEFF no). */
const FIELD_SPACE = /[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/;

export function emptyHostsMap(): HostsMap {
  return { name4: new Map(), name6: new Map(), wild4: new Map(), wild6: new Map(), addr: new Map() };
}

/**
 * Reads hosts(5) text: `ADDRESS NAME...` per line, `#` starts a comment, lines with a bad address or
 * without a name are skipped. An address may carry an IPv6 zone (`fe80::1%lo0`), which is ignored.
 */
export function parseHosts(text: string, opts: ParseHostsOptions): HostsMap {
  const map = emptyHostsMap();
  for (const raw of text.split("\n")) {
    if (Buffer.byteLength(raw) >= MAX_LINE_BYTES) break;
    const hash = raw.indexOf("#");
    const fields = (hash < 0 ? raw : raw.slice(0, hash)).split(FIELD_SPACE).filter((f) => f !== "");
    if (fields.length < 2) continue;
    const [first = "", ...names] = fields;
    const zone = first.indexOf("%");
    const ip = parseGoIP(zone < 0 ? first : first.slice(0, zone));
    if (!ip) continue;
    const v4 = isIPv4Mapped(ip);
    const address = goIPString(ip);
    for (const written of names) addName(map, opts, fqdn(written).toLowerCase(), address, v4);
  }
  return map;
}

function addName(map: HostsMap, opts: ParseHostsOptions, name: string, address: string, v4: boolean) {
  if (matchZone(name, opts.origins) === undefined) return;
  if (name.startsWith("*.")) {
    push(v4 ? map.wild4 : map.wild6, name, address);
    return;
  }
  push(v4 ? map.name4 : map.name6, name, address);
  if (opts.autoReverse) push(map.addr, address, name);
}

function push(map: Map<string, string[]>, key: string, value: string): void {
  const list = map.get(key);
  if (list) list.push(value);
  else map.set(key, [value]);
}

/** CoreDNS's Map.Len(): every address of every name, wildcards included, plus every reverse entry. */
export function hostsMapSize(map: HostsMap): number {
  let n = 0;
  for (const m of [map.name4, map.name6, map.wild4, map.wild6, map.addr])
    for (const v of m.values()) n += v.length;
  return n;
}

/**
 * The addresses for `host` (lower case) in one map: its own entry, else the wildcard one label up
 * (`a.example.com.` → `*.example.com.`). A single-label name has no wildcard to match.
 */
export function lookupIn(names: Map<string, string[]>, wild: Map<string, string[]>, host: string): string[] {
  const own = names.get(host);
  if (own) return [...own];
  const pattern = wildcardOf(host);
  return pattern === undefined ? [] : [...(wild.get(pattern) ?? [])];
}

/** `*.` plus everything after the first label, honouring escaped dots; undefined for one label or the root. */
function wildcardOf(host: string): string | undefined {
  for (let i = 0; i < host.length - 1; i++) {
    if (host[i] !== ".") continue;
    let slashes = 0;
    for (let j = i - 1; j >= 0 && host[j] === "\\"; j--) slashes++;
    if (slashes % 2 === 0) return `*.${host.slice(i + 1)}`;
  }
  return undefined;
}
