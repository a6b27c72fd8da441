import { GoRegex, MAX_REGEX_LENGTH } from "../../plugin/go-regex.js";
import { normalizeName } from "./normalize.js";
import { RuleError } from "./rule.js";

/** Whether a question name is one a `ttl` or `rcode` rule applies to. */
export type NamePredicate = (name: string) => boolean;

/**
 * `[exact|prefix|suffix|substring|regex] STRING` for the rules that only look at the name. `rule` is the
 * rule's keyword, for upstream's error wording.
 */
export function namePredicate(matchType: string, value: string, rule: "ttl" | "rcode"): NamePredicate {
  const name = normalizeName(value);
  switch (matchType.toLowerCase()) {
    case "exact":
      return (n) => n === name;
    case "prefix":
      return (n) => n.startsWith(name);
    case "suffix":
      return (n) => n.endsWith(name);
    case "substring":
      return (n) => n.includes(name);
    case "regex": {
      if (value.length > MAX_REGEX_LENGTH) {
        throw new RuleError(
          `regex pattern too long in a ${rule} rule: ${value.length} > ${MAX_REGEX_LENGTH}`,
        );
      }
      const re = GoRegex.compile(value);
      if (typeof re === "string") throw new RuleError(`invalid regex pattern in a ${rule} rule: ${value}`);
      return (n) => re.test(n);
    }
    default:
      throw new RuleError(
        `${rule} rule supports only exact, prefix, suffix, substring, and regex name matching`,
      );
  }
}
