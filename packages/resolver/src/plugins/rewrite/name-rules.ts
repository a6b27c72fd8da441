import type { GoRegex } from "../../plugin/go-regex.js";
import type { Message } from "../../wire/message.js";
import { ownerNameRule, valueRule } from "./answer-rules.js";
import { questionName, setQuestionName } from "./normalize.js";
import { substitute } from "./regex.js";
import type { Mode, ResponseRule, Rule } from "./rule.js";
import { remapRewriter } from "./strings.js";

/** How a name rule turns the question name into the new one; undefined when it does not match. */
export type NameMatcher = (name: string) => string | undefined;

export const exactMatcher =
  (from: string, to: string): NameMatcher =>
  (name) =>
    name === from ? to : undefined;

export const prefixMatcher =
  (prefix: string, to: string): NameMatcher =>
  (name) =>
    name.startsWith(prefix) ? to + name.slice(prefix.length) : undefined;

export const suffixMatcher =
  (suffix: string, to: string): NameMatcher =>
  (name) =>
    name.endsWith(suffix) ? name.slice(0, name.length - suffix.length) + to : undefined;

export const substringMatcher =
  (part: string, to: string): NameMatcher =>
  (name) =>
    name.includes(part) ? name.replaceAll(part, to) : undefined;

export const regexMatcher =
  (re: GoRegex, to: string): NameMatcher =>
  (name) =>
    substitute(re, name, to);

/**
 * A `name` rule. With `auto`, the reply's names are mapped back from the new question name to the old one
 * (owner names and pointed-at names alike), before any explicit `answer` rules are undone.
 */
export function nameRule(mode: Mode, match: NameMatcher, auto: boolean, answers: ResponseRule[]): Rule {
  return {
    mode,
    rewrite(request: Message) {
      const original = questionName(request);
      const rewritten = match(original);
      if (rewritten === undefined) return undefined;
      setQuestionName(request, rewritten);
      if (!auto) return answers;
      const back = remapRewriter(rewritten, original);
      return [ownerNameRule(back), valueRule(back), ...answers];
    },
  };
}
