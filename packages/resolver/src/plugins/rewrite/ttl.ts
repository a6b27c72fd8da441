import type { Message } from "../../wire/message.js";
import type { NamePredicate } from "./name-match.js";
import { namePredicate } from "./name-match.js";
import { questionName } from "./normalize.js";
import type { Mode, ResponseRule, Rule } from "./rule.js";
import { RuleError } from "./rule.js";

const MAX_UINT32 = 0xffffffff;
/** An open-ended range (`30-`) stops at the largest TTL RFC 2181 allows. */
const MAX_TTL = 2147483647;

/** A TTL as Go's strconv.ParseUint(s, 10, 32) reads it. */
function uint32Of(s: string): number | undefined {
  if (!/^\d+$/.test(s)) return undefined;
  const n = Number(s);
  return n <= MAX_UINT32 ? n : undefined;
}

/** `SECONDS`, `MIN-MAX`, `MIN-` or `-MAX`; a lone `-` and a range running backwards are refused. */
export function parseTtlRange(s: string): { min: number; max: number } | undefined {
  const parts = s.split("-");
  if (parts.length === 1) {
    const n = uint32Of(s);
    return n === undefined ? undefined : { min: n, max: n };
  }
  if (parts.length !== 2) return undefined;
  const [low = "", high = ""] = parts;
  if (low === "" && high === "") return undefined;
  const min = low === "" ? 0 : uint32Of(low);
  const max = high === "" ? MAX_TTL : uint32Of(high);
  if (min === undefined || max === undefined || min > max) return undefined;
  return { min, max };
}

/** Clamps the TTL of every record in the reply into [min, max]. */
function ttlResponse(min: number, max: number): ResponseRule {
  return {
    apply(_reply, rr) {
      if (!rr) return;
      if (rr.ttl < min) rr.ttl = min;
      else if (rr.ttl > max) rr.ttl = max;
    },
  };
}

/** A rule that leaves the request alone and, for the names it matches, changes the reply. */
export function responseOnlyRule(mode: Mode, matches: NamePredicate, response: ResponseRule): Rule {
  return {
    mode,
    rewrite: (request: Message) => (matches(questionName(request)) ? [response] : undefined),
  };
}

/** The arguments after `ttl`: `[TYPE] NAME SECONDS|MIN-MAX`. */
export function parseTtlRule(mode: Mode, args: readonly string[]): Rule {
  if (args.length < 2) throw new RuleError(`too few (${args.length}) arguments for a ttl rule`);
  // More than three arguments leave no TTL to read, which upstream reports as an empty TTL.
  const value = args.length === 2 ? args[1] : args.length === 3 ? args[2] : "";
  const range = parseTtlRange(value as string);
  if (!range) throw new RuleError(`invalid TTL '${value}' for a ttl rule`);
  const matches =
    args.length === 3
      ? namePredicate(args[0] as string, args[1] as string, "ttl")
      : namePredicate("exact", args[0] as string, "ttl");
  return responseOnlyRule(mode, matches, ttlResponse(range.min, range.max));
}
