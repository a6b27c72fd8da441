import type { Stanza } from "../corefile/parse.js";
import { stanzaError } from "./setup.js";

/**
 * For plugins whose setup is caddy's `if c.NextArg() { return c.ArgErr() }`: the error names the token that was
 * found, and an opening brace counts as that token. Only the stanza given is checked, as upstream reads only
 * its first occurrence.
 */
export function refuseArgs(stanza: Stanza, plugin: string): void {
  const first = stanza.args[0];
  if (first !== undefined)
    throw stanzaError(stanza, plugin, `Wrong argument count or unexpected line ending after '${first}'`);
  if (stanza.blockEnd !== undefined)
    throw stanzaError(stanza, plugin, "Unexpected token '{', expecting argument");
}
