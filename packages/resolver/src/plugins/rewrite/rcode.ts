import { namePredicate } from "./name-match.js";
import { rcodeByName } from "./names.js";
import type { Mode, ResponseRule, Rule } from "./rule.js";
import { RuleError } from "./rule.js";
import { responseOnlyRule } from "./ttl.js";

/** Swaps one rcode of the reply for another; it runs even on replies without records. */
function rcodeResponse(from: number, to: number): ResponseRule {
  return {
    messageLevel: true,
    apply(reply) {
      if (reply.rcode === from) reply.rcode = to;
    },
  };
}

/** The arguments after `rcode`: `[TYPE] NAME FROM TO`. */
export function parseRcodeRule(mode: Mode, args: readonly string[]): Rule {
  if (args.length < 3) throw new RuleError(`too few (${args.length}) arguments for a rcode rule`);
  // As with ttl, more than four arguments leave the rcodes unread and fail as empty ones.
  const [fromText = "", toText = ""] =
    args.length === 3 ? args.slice(1) : args.length === 4 ? args.slice(2) : [];
  const from = rcodeByName(fromText);
  if (from === undefined) throw new RuleError(`invalid matching RCODE '${fromText}' for a rcode rule`);
  const to = rcodeByName(toText);
  if (to === undefined) throw new RuleError(`invalid replacement RCODE '${toText}' for a rcode rule`);
  const matches =
    args.length === 4
      ? namePredicate(args[0] as string, args[1] as string, "rcode")
      : namePredicate("exact", args[0] as string, "rcode");
  return responseOnlyRule(mode, matches, rcodeResponse(from, to));
}
