import { GoRegex, MAX_REGEX_LENGTH } from "../../plugin/go-regex.js";
import type { Message, ResourceRecord } from "../../wire/message.js";
import { normalizeName } from "./normalize.js";
import { substitute } from "./regex.js";
import type { Mode, RequestState, ResponseRule, Rule } from "./rule.js";
import { RuleError } from "./rule.js";

/** Turns a CNAME target into the one the client is to see, or undefined when the rule is not for it. */
type TargetRewriter = (target: string) => string | undefined;

const MATCH_TYPES = new Set(["exact", "prefix", "suffix", "substring", "regex"]);

/** `cname [exact|prefix|suffix|substring|regex] FROM TO`, the arguments after `cname`. */
export function parseCnameRule(mode: Mode, args: readonly string[]): Rule {
  if (args.length !== 2 && args.length !== 3) {
    throw new RuleError(`too few (${args.length}) arguments for a cname rule`);
  }
  const matchType = args.length === 3 ? (args[0] as string).toLowerCase() : "exact";
  if (!MATCH_TYPES.has(matchType)) throw new RuleError(`unknown cname rewrite type: ${matchType}`);
  // Upstream lower-cases both, patterns included; only an exact rule's names are made absolute.
  let from = (args.at(-2) as string).toLowerCase();
  let to = (args.at(-1) as string).toLowerCase();
  if (matchType === "exact") {
    from = normalizeName(from);
    to = normalizeName(to);
  }
  const rewriter = targetRewriter(matchType, from, to);
  return {
    mode,
    rewrite(request, state) {
      if (from === "" || to === "") return undefined;
      return [cnameTargetResponse(rewriter, request, state)];
    },
  };
}

function targetRewriter(matchType: string, from: string, to: string): TargetRewriter {
  switch (matchType) {
    case "exact":
      return (target) => (target === from ? to : undefined);
    case "prefix":
      return (target) => (target.startsWith(from) ? to + target.slice(from.length) : undefined);
    case "suffix":
      return (target) =>
        target.endsWith(from) ? target.slice(0, target.length - from.length) + to : undefined;
    case "substring":
      return (target) => (target.includes(from) ? target.replaceAll(from, to) : undefined);
    default: {
      if (from.length > MAX_REGEX_LENGTH) {
        throw new RuleError(`regex pattern too long in a cname rule: ${from.length} > ${MAX_REGEX_LENGTH}`);
      }
      const re = GoRegex.compile(from);
      if (typeof re === "string") throw new RuleError(`invalid cname rewrite regex pattern: ${re}`);
      return (target) => substitute(re, target, to);
    }
  }
}

/**
 * A CNAME whose target the rule rewrites gets the new target, and the new target is resolved again through
 * the server for the question's type. As upstream does, the answer then keeps only the CNAMEs up to the
 * rewritten one, followed by the new lookup's answer, and takes that lookup's TC bit.
 */
function cnameTargetResponse(rewrite: TargetRewriter, request: Message, state: RequestState): ResponseRule {
  return {
    awaits: true,
    async apply(reply, rr) {
      if (rr?.type !== "CNAME") return;
      const from = rr.data;
      const to = rewrite(from);
      if (to === undefined) return;
      const q = request.question[0];
      if (!q) return;
      // Upstream points its request at the new target too; a `log` further up the chain shows it.
      request.question[0] = { ...q, name: to };
      const found = await state.upstream?.(to, q.type).catch(() => undefined);
      if (!found) return;
      reply.answer = [
        ...chainUpTo(reply.answer, from, to),
        ...found.answer.map((a) => ({ ...a }) as ResourceRecord),
      ];
      reply.tc = found.tc;
    },
  };
}

/** The answer's CNAMEs up to the first that points at `from`, which is made to point at `to`. */
function chainUpTo(answer: readonly ResourceRecord[], from: string, to: string): ResourceRecord[] {
  const kept: ResourceRecord[] = [];
  for (const rr of answer) {
    if (rr.type !== "CNAME") continue;
    kept.push(rr);
    if (rr.data === from) {
      rr.data = to;
      break;
    }
  }
  return kept;
}
