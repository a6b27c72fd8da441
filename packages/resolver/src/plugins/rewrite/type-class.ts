import type { Message } from "../../wire/message.js";
import { classByName, typeByName } from "./names.js";
import type { Mode, Rule } from "./rule.js";
import { RuleError } from "./rule.js";

/**
 * `type FROM TO` and `class FROM TO`: the question's type or class is swapped. Nothing in the reply is
 * changed back apart from the question, which the reverter restores when the rule stops the list.
 */
function questionFieldRule(mode: Mode, field: "type" | "class", from: number, to: number): Rule {
  return {
    mode,
    rewrite(request: Message) {
      const q = request.question[0];
      if (!q || from === 0 || to === 0 || q[field] !== from) return undefined;
      request.question[0] = { ...q, [field]: to };
      return [];
    },
  };
}

/** The arguments after `type`; the argument count is checked by the caller, as upstream does. */
export function parseTypeRule(mode: Mode, args: readonly string[]): Rule {
  const [from, to] = args.map((a) => {
    const n = typeByName(a);
    if (n === undefined) throw new RuleError(`invalid type "${a.toUpperCase()}"`);
    return n;
  });
  return questionFieldRule(mode, "type", from as number, to as number);
}

/** The arguments after `class`. */
export function parseClassRule(mode: Mode, args: readonly string[]): Rule {
  const [from, to] = args.map((a) => {
    const n = classByName(a);
    if (n === undefined) throw new RuleError(`invalid class "${a.toUpperCase()}"`);
    return n;
  });
  return questionFieldRule(mode, "class", from as number, to as number);
}
