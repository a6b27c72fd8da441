import type { Stanza } from "../../corefile/parse.js";
import { PluginError } from "../../plugin/handler.js";
import type { Setup } from "../../plugin/setup.js";
import { parseRule } from "./parse.js";
import { RewriteHandler } from "./rewrite.js";
import type { Rule, Upstream } from "./rule.js";
import { RuleError } from "./rule.js";

/**
 * A stanza's words. A rule with fewer than two words on the `rewrite` line takes its words from the block
 * instead, all lines run together (`rewrite stop {` / `name ...` / `answer name ...` / `}`). Called inside
 * parseRewrite, which turns a RuleError into a Corefile error at the stanza.
 */
export function ruleWords(stanza: Stanza): string[] {
  if (stanza.args.length >= 2) {
    // Upstream reads a block after a complete rule as a rule with no words, and fails the same way.
    if (stanza.blockEnd !== undefined) throw new RuleError("no rule type specified for rewrite");
    return [...stanza.args];
  }
  return [...stanza.args, ...stanza.block.flatMap(blockWords)];
}

function blockWords(line: Stanza): string[] {
  const nested = line.block.length > 0 ? ["{", ...line.block.flatMap(blockWords), "}"] : [];
  return [line.name, ...line.args, ...nested];
}

/** Every `rewrite` line of a server block, in the order written; they run in that order. */
export function parseRewrite(stanzas: readonly Stanza[]): Rule[] {
  return stanzas.map((stanza) => {
    try {
      return parseRule(ruleWords(stanza));
    } catch (err) {
      // Upstream's rule parser knows no position: its errors read `plugin/rewrite: MESSAGE`.
      if (err instanceof RuleError) throw new PluginError("rewrite", err.message);
      throw err;
    }
  });
}

export interface RewriteDeps {
  /** Where `cname` rules resolve rewritten targets; the resolver points it back at its own servers. */
  upstream?: Upstream;
}

/** `rewrite [continue|stop] FIELD ...`, any number of times per server block. */
export const setupRewrite: Setup<RewriteDeps> = (ctx) => {
  const rules = parseRewrite(ctx.stanzas);
  return { plugin: (next) => new RewriteHandler(next, rules, ctx.deps.upstream) };
};
