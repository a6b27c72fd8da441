import type { Stanza } from "../../corefile/parse.js";
import { PluginError } from "../../plugin/handler.js";
import { stanzaError } from "../../plugin/setup.js";
import type { Header } from "../../wire/message.js";

/** One flag forced on or off. */
export interface FlagRule {
  flag: "aa" | "ra" | "rd";
  state: boolean;
}

export interface HeaderRules {
  query: FlagRule[];
  response: FlagRule[];
}

const FLAGS = new Set(["aa", "ra", "rd"]);

/**
 * The rules of a `header` block. Upstream takes the first stanza that yields any rule and ignores the rest,
 * arguments on the `header` line included; a block line that is wrong fails setup even so.
 */
export function parseHeaderStanzas(stanzas: readonly Stanza[]): HeaderRules {
  for (const stanza of stanzas) {
    const rules: HeaderRules = { query: [], response: [] };
    for (const line of stanza.block) {
      const selector = line.name.toLowerCase();
      if (selector !== "query" && selector !== "response")
        throw ruleError(line, `invalid selector=${selector} should be query or response`);
      rules[selector].push(...lineRules(line));
    }
    if (rules.query.length > 0 || rules.response.length > 0) return rules;
  }
  // caddy's ArgErr names the last token read: the last stanza's closing brace, or else its last word.
  const last = stanzas.at(-1);
  if (!last) throw new Error("setup for header called without a stanza");
  const token = last.blockEnd !== undefined ? "}" : (last.args.at(-1) ?? last.name);
  const at = last.blockEnd !== undefined ? { ...last, line: last.blockEnd } : last;
  throw stanzaError(at, "header", `Wrong argument count or unexpected line ending after '${token}'`);
}

/** `SELECTOR ACTION FLAGS...`, checked in upstream's order: action present, flags present, action, each flag. */
function lineRules(line: Stanza): FlagRule[] {
  const [action = "", ...flags] = line.args;
  if (action === "") throw flagError("no flag action provided");
  if (flags.length === 0) throw flagError("invalid length for flags, at least one should be provided");
  const lowered = action.toLowerCase();
  if (lowered !== "set" && lowered !== "clear")
    throw flagError(`unknown flag action=${lowered}, should be set or clear`);
  return flags.map((f) => {
    const flag = f.toLowerCase();
    if (!FLAGS.has(flag)) throw flagError(`unknown/unsupported flag=${flag}`);
    return { flag: flag as FlagRule["flag"], state: lowered === "set" };
  });
}

function ruleError(line: Stanza, message: string) {
  return stanzaError(line, "header", `setting up rule: ${message}`);
}

/** Upstream builds these from its rule parser's plain errors: the plugin's name, and no file or line. */
function flagError(message: string) {
  return new PluginError("header", `setting up rule: ${message}`);
}

/** Applies the rules in order (the last one on a flag wins) to `m` in place. */
export function applyFlagRules(m: Header, rules: readonly FlagRule[]): void {
  for (const { flag, state } of rules) m[flag] = state;
}
