import { ownerNameRule, valueRule } from "./answer-rules.js";
import {
  exactMatcher,
  nameRule,
  prefixMatcher,
  regexMatcher,
  substringMatcher,
  suffixMatcher,
} from "./name-rules.js";
import { normalizeName } from "./normalize.js";
import { checkedPattern } from "./regex.js";
import type { Mode, ResponseRule, Rule } from "./rule.js";
import { RuleError } from "./rule.js";
import { regexRewriter, suffixRewriter } from "./strings.js";

/** `name [exact|prefix|suffix|substring|regex] FROM TO [answer ...]`, the arguments after `name`. */
export function parseNameRule(mode: Mode, args: readonly string[]): Rule {
  if (args.length < 2) throw new RuleError("too few arguments for a name rule");
  const explicit = args.length >= 3;
  const matchType = explicit ? (args[0] as string).toLowerCase() : "exact";
  const rawFrom = (explicit ? args[1] : args[0]) as string;
  const rawTo = (explicit ? args[2] : args[1]) as string;
  // Regex patterns are taken as written; every other FROM/TO is a name, made absolute and lower case.
  const from = matchType === "regex" ? rawFrom : normalizeName(rawFrom);
  const to = matchType === "regex" ? rawTo : normalizeName(rawTo);
  const { auto, answers } = args.length > 3 ? parseAnswers(matchType, args.slice(3)) : noAnswers();
  return buildNameRule(mode, matchType, from, to, auto, answers);
}

function noAnswers(): { auto: boolean; answers: ResponseRule[] } {
  return { auto: false, answers: [] };
}

function buildNameRule(
  mode: Mode,
  matchType: string,
  from: string,
  to: string,
  auto: boolean,
  answers: ResponseRule[],
): Rule {
  switch (matchType) {
    case "exact": {
      // Upstream checks an exact rule's TO as if it were a pattern; a TO that is no valid RE2 fails setup.
      const checked = checkedPattern(to, from);
      if (typeof checked === "string") throw new RuleError(checked);
      // An exact rewrite always maps the reply back, `answer auto` or not.
      return nameRule(mode, exactMatcher(from, to), true, answers);
    }
    case "prefix":
      return nameRule(mode, prefixMatcher(from, to), auto, answers);
    case "suffix": {
      // The reply is mapped back by swapping the suffixes the other way round, not by the full name.
      const back = suffixRewriter(to, from);
      const undo = auto ? [ownerNameRule(back), valueRule(back)] : [];
      return nameRule(mode, suffixMatcher(from, to), false, [...undo, ...answers]);
    }
    case "substring":
      return nameRule(mode, substringMatcher(from, to), auto, answers);
    case "regex": {
      const checked = checkedPattern(from, to);
      if (typeof checked === "string") throw new RuleError(checked);
      return nameRule(mode, regexMatcher(checked, normalizeName(to)), auto, answers);
    }
    default:
      throw new RuleError(
        `name rule supports only exact, prefix, suffix, substring, and regex name matching, received: ${matchType}`,
      );
  }
}

/** `answer auto`, `answer name FROM TO`, `answer value FROM TO`, repeated; `answer` may be left out after the first. */
export function parseAnswers(
  matchType: string,
  args: readonly string[],
): { auto: boolean; answers: ResponseRule[] } {
  if (args.length < 2) throw new RuleError(`invalid arguments for ${matchType} rule`);
  let auto = false;
  let nameRules = 0;
  const answers: ResponseRule[] = [];
  let i = 0;
  let last = "";
  while (i < args.length) {
    if (last === "" && args[i] !== "answer") {
      throw new RuleError(
        `exceeded the number of arguments for a non-answer rule argument for ${matchType} rule`,
      );
    }
    if (args[i] === "answer") i++;
    if (i === args.length) throw new RuleError(`type missing for answer rule for ${matchType} rule`);
    last = args[i++] as string;
    if (last === "auto") {
      auto = true;
      continue;
    }
    if (last !== "name" && last !== "value") {
      throw new RuleError(`invalid type ${goQuote(last)} for answer rule for ${matchType} rule`);
    }
    if (args.length - i < 2) {
      throw new RuleError(`${last} answer rule for ${matchType} rule: 2 arguments required`);
    }
    const checked = checkedPattern(args[i] as string, args[i + 1] as string);
    if (typeof checked === "string") {
      throw new RuleError(`${last} answer rule for ${matchType} rule: ${checked}`);
    }
    const rewrite = regexRewriter(checked, normalizeName(args[i + 1] as string));
    answers.push(last === "name" ? ownerNameRule(rewrite) : valueRule(rewrite));
    if (last === "name") nameRules++;
    i += 2;
  }
  if (auto && nameRules > 0) {
    // The misspelling is upstream's; people grep logs for it.
    throw new RuleError("auto name answer rule cannot be combined with explicit name anwer rules");
  }
  return { auto, answers };
}

/** Go's %q for the plain strings a Corefile holds. */
export function goQuote(s: string): string {
  return JSON.stringify(s);
}
