import { parseCnameRule } from "./cname.js";
import { parseEdns0Rule } from "./edns0-parse.js";
import { parseNameRule } from "./name-parse.js";
import { parseRcodeRule } from "./rcode.js";
import type { Mode, Rule } from "./rule.js";
import { RuleError } from "./rule.js";
import { parseTtlRule } from "./ttl.js";
import { parseClassRule, parseTypeRule } from "./type-class.js";

/** One rule from its words: `[continue|stop] FIELD ARGS...`. Without a mode, a rule stops the list. */
export function parseRule(args: readonly string[]): Rule {
  if (args.length === 0) throw new RuleError("no rule type specified for rewrite");
  const first = (args[0] as string).toLowerCase();
  let mode: Mode = "stop";
  let rest = args.slice(1);
  if (first === "continue" || first === "stop") {
    mode = first;
    if (args.length < 2) throw new RuleError(`${first} rule must begin with a rule type`);
    rest = args.slice(2);
  }
  const kind = first === "continue" || first === "stop" ? (args[1] as string).toLowerCase() : first;
  switch (kind) {
    case "answer":
      throw new RuleError("response rewrites must begin with a name rule");
    case "name":
      return parseNameRule(mode, rest);
    case "class":
    case "type":
      if (rest.length !== 2) throw new RuleError(`${kind} rules must have exactly two arguments`);
      return kind === "type" ? parseTypeRule(mode, rest) : parseClassRule(mode, rest);
    case "ttl":
      return parseTtlRule(mode, rest);
    case "rcode":
      return parseRcodeRule(mode, rest);
    case "edns0":
      return parseEdns0Rule(mode, rest);
    case "cname":
      return parseCnameRule(mode, rest);
    default: {
      // Upstream names the rule's first word here, which is the mode when one was given.
      throw new RuleError(`invalid rule type ${JSON.stringify(args[0])}`);
    }
  }
}
