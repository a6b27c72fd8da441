import { parseGoDuration } from "@switchyard/basics";
import type { Stanza } from "../../corefile/parse.js";
import { normalizeZoneArgs } from "../../plugin/pkg/zone-args.js";
import { stanzaError } from "../../plugin/setup.js";

const PLUGIN = "hosts";

export interface HostsOptions {
  path: string;
  /** Whether FILE was given: only then does setup look at the file (and warn about it). */
  pathGiven: boolean;
  /** The zones the plugin answers for, normalised. */
  origins: string[];
  /** Where a miss goes to the next plugin; empty when `fallthrough` is off. */
  fallthrough: string[];
  fallthroughUnsupported: boolean;
  autoReverse: boolean;
  ttl: number;
  /** Milliseconds between looks at the file; 0 turns the periodic look off. */
  reloadMs: number;
  /** Corefile lines that are hosts entries, as `ADDRESS NAME...` text. */
  inline: string[];
}

/**
 * Reads `hosts [FILE [ZONES...]] { ... }` as CoreDNS's hostsParse does. A block line that is no option
 * is an inline hosts entry, until a `fallthrough` with zones has been seen; after that it is an error.
 */
export function parseHostsStanza(stanza: Stanza, blockZones: readonly string[]): HostsOptions {
  const [file, ...zones] = stanza.args;
  const opts: HostsOptions = {
    path: file ?? "/etc/hosts",
    pathGiven: file !== undefined,
    origins: zones.length > 0 ? normalizeZoneArgs(zones) : normalizeZoneArgs(blockZones),
    fallthrough: [],
    fallthroughUnsupported: false,
    autoReverse: true,
    ttl: 3600,
    reloadMs: 5000,
    inline: [],
  };
  for (const line of stanza.block) parseBlockLine(line, opts);
  if (opts.fallthroughUnsupported && opts.fallthrough.length === 0) {
    // CoreDNS names the block's closing brace; the parser keeps no line for it, so take the line after
    // the block's last one, which is where it stands in a Corefile written one option per line.
    const last = stanza.block.at(-1);
    const at = last ? { ...stanza, line: last.line + 1 } : stanza;
    throw stanzaError(at, PLUGIN, "fallthrough_unsupported requires fallthrough");
  }
  return opts;
}

function parseBlockLine(line: Stanza, opts: HostsOptions): void {
  const args = line.args;
  switch (line.name) {
    case "fallthrough":
      opts.fallthrough = normalizeZoneArgs(args.length > 0 ? args : ["."]);
      return;
    case "fallthrough_unsupported":
      // Caddy's ArgErr names the last token read, which is the last argument.
      if (args.length > 0)
        throw stanzaError(
          line,
          PLUGIN,
          `Wrong argument count or unexpected line ending after '${args.at(-1)}'`,
        );
      opts.fallthroughUnsupported = true;
      return;
    case "no_reverse":
      opts.autoReverse = false;
      return;
    case "ttl":
      opts.ttl = parseTtl(line);
      return;
    case "reload":
      opts.reloadMs = parseReload(line);
      return;
    default:
      if (opts.fallthrough.length > 0) throw stanzaError(line, PLUGIN, `unknown property '${line.name}'`);
      opts.inline.push([line.name, ...args].join(" "));
  }
}

/** `ttl SECONDS`: 1–65535; extra arguments are ignored, as in CoreDNS. */
function parseTtl(line: Stanza): number {
  const text = line.args[0];
  if (text === undefined) throw stanzaError(line, PLUGIN, "ttl needs a time in second");
  // Go's strconv.Atoi: an optional sign and decimal digits, within int64.
  if (!/^[+-]?\d+$/.test(text) || BigInt(text) > 2n ** 63n - 1n || BigInt(text) < -(2n ** 63n))
    throw stanzaError(line, PLUGIN, "ttl needs a number of second");
  const ttl = Number(text);
  if (ttl <= 0 || ttl > 65535) throw stanzaError(line, PLUGIN, "ttl provided is invalid");
  return ttl;
}

/** `reload DURATION`: a Go duration, not negative; 0 disables. */
function parseReload(line: Stanza): number {
  if (line.args.length !== 1)
    throw stanzaError(line, PLUGIN, "reload needs a duration (zero seconds to disable)");
  const text = line.args[0] as string;
  const ms = parseGoDuration(text);
  if (ms === undefined) throw stanzaError(line, PLUGIN, `invalid duration for reload '${text}'`);
  if (ms < 0) throw stanzaError(line, PLUGIN, `invalid negative duration for reload '${text}'`);
  return ms;
}
