import { formatGoDuration, parseGoDuration } from "@switchyard/basics";
import { CorefileError } from "../../corefile/errors.js";
import type { Stanza } from "../../corefile/parse.js";
import type { ServerSettings } from "../../plugin/server-settings.js";
import type { Setup } from "../../plugin/setup.js";
import { stanzaError } from "../../plugin/setup.js";

const PLUGIN = "timeouts";
const MIN_MS = 1000;
const MAX_MS = 24 * 3_600_000;
const KEYS = { read: "tcpReadTimeoutMs", write: "tcpWriteTimeoutMs", idle: "tcpIdleTimeoutMs" } as const;

const fail = (line: Stanza, message: string) => stanzaError(line, PLUGIN, message);
const argCount = (line: Stanza) =>
  fail(line, `Wrong argument count or unexpected line ending after '${line.args.at(-1) ?? line.name}'`);
/** Upstream wraps these two errors in the plugin's prefix twice. */
const twice = (stanza: Stanza, message: string) =>
  new CorefileError(stanza.file, stanza.line, message, `${PLUGIN}: plugin/${PLUGIN}`);

/**
 * `timeouts { read D; write D; idle D; maxtcpqueries N }` for the TCP side of the block's server: the wait for a
 * connection's first query, for handing a reply to the kernel, between queries, and how many queries one
 * connection may ask before it is closed. Durations are Go's (a bare integer means seconds), 1s to 24h.
 */
export function parseTimeouts(stanzas: readonly Stanza[], into: ServerSettings): void {
  for (const stanza of stanzas) {
    if (stanza.args.length > 0)
      throw twice(stanza, `Wrong argument count or unexpected line ending after '${stanza.args.at(-1)}'`);
    for (const line of stanza.block) {
      if (line.args.length !== 1 || line.block.length > 0) throw argCount(line);
      const value = line.args[0] as string;
      if (line.name === "maxtcpqueries") {
        into.tcpMaxQueries = parseMaxQueries(line, value);
        continue;
      }
      // Upstream reads the duration before it looks at the name, so a bad value wins over a bad name.
      const text = /^[-+]?\d+$/.test(value) ? `${value}s` : value;
      const ms = parseGoDuration(text);
      if (ms === undefined) throw fail(line, `failed to parse duration '${text}'`);
      if (ms < MIN_MS || ms > MAX_MS)
        throw fail(
          line,
          `timeout provided '${formatGoDuration(ms)}' needs to be between 1 second and 24 hours`,
        );
      if (!Object.hasOwn(KEYS, line.name)) throw fail(line, `unknown option: '${line.name}'`);
      into[KEYS[line.name as keyof typeof KEYS]] = ms;
    }
    // caddy's position is the token it stopped at: the `}` of an empty block.
    const at = stanza.blockEnd === undefined ? stanza : { ...stanza, line: stanza.blockEnd };
    if (stanza.block.length === 0) throw twice(at, "timeouts block with no timeouts specified");
  }
}

/** -1 (no limit) or a positive count, read as Go's strconv.Atoi does. */
function parseMaxQueries(line: Stanza, value: string): number {
  const atoi = (why: string) =>
    fail(
      line,
      `invalid value for maxtcpqueries '${value}': strconv.Atoi: parsing ${JSON.stringify(value)}: ${why}`,
    );
  if (!/^[-+]?\d+$/.test(value)) throw atoi("invalid syntax");
  const n = Number(value);
  if (!Number.isSafeInteger(n) || Math.abs(n) > 2 ** 63) throw atoi("value out of range");
  if (n === 0 || n < -1)
    throw fail(line, `maxtcpqueries provided '${n}' needs to be -1 (unlimited) or a positive integer`);
  return n;
}

/** No handler: the settings go to the server the block listens on. */
export const setupTimeouts: Setup = (ctx) => {
  parseTimeouts(ctx.stanzas, ctx.server);
  return {};
};
