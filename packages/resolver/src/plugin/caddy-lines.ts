import type { Stanza } from "../corefile/parse.js";

/**
 * The lines a setup written as caddy's `for c.Next() { args := c.RemainingArgs() ... }` visits: the stanza, then
 * (when it opened a block) the `{` alone, each line of the block (nested blocks likewise) and the `}`, each with
 * the words after its first one. Plugins whose upstream setup reads a block that way take it as more lines of the
 * plugin itself; this lets them do the same.
 */
export function caddyLines(stanza: Stanza): Stanza[] {
  if (stanza.blockEnd === undefined) return [{ ...stanza, block: [] }];
  const brace = (name: string, line: number): Stanza => ({
    name,
    args: [],
    block: [],
    file: stanza.file,
    line,
  });
  // `name { }` on one line: the `}` is read as the `{` line's argument.
  if (stanza.blockEnd === stanza.line && stanza.block.length === 0)
    return [
      { ...stanza, block: [] },
      { ...brace("{", stanza.line), args: ["}"] },
    ];
  return [
    { ...stanza, block: [] },
    brace("{", stanza.line),
    ...stanza.block.flatMap(caddyLines),
    brace("}", stanza.blockEnd),
  ];
}
