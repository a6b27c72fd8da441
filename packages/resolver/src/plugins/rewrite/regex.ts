/**
 * Regular expressions as the rewrite plugin's Corefile spells them (Go's RE2 syntax), run with JavaScript's
 * engine. The two agree on the patterns people write for names; what RE2 refuses (look-around,
 * back-references) is refused here too, so a Corefile CoreDNS rejects is not quietly accepted.
 */

/** CoreDNS's cap on a pattern's length, against patterns that take too much memory to compile. */
export const MAX_REGEX_LENGTH = 10000;

const RE2_UNSUPPORTED = /\(\?<?[=!]|\\[1-9]/;

/** Go's leading flag group; only these flags have a JavaScript equivalent. */
const LEADING_FLAGS = /^\(\?([ims]+)\)/;

/**
 * Compiles an RE2-style pattern, or returns undefined where Go's regexp.Compile fails. A leading `(?i)`, `(?m)`
 * or `(?s)` becomes the JavaScript flag of the same meaning.
 */
export function compileGoRegex(pattern: string): RegExp | undefined {
  if (RE2_UNSUPPORTED.test(pattern)) return undefined;
  const flags = LEADING_FLAGS.exec(pattern);
  const body = flags ? pattern.slice(flags[0].length) : pattern;
  try {
    // RE2 names groups `(?P<name>...)`; JavaScript only knows `(?<name>...)`.
    return new RegExp(body.replaceAll("(?P<", "(?<"), flags ? [...new Set(flags[1])].join("") : "");
  } catch {
    return undefined;
  }
}

/**
 * The error Go's regexp.Compile gives for a pattern compileGoRegex refuses: `error parsing regexp: CODE: \`EXPR\``,
 * with Go's code and fragment for the mistakes people make (brackets, a repeat with nothing before it, a
 * trailing backslash, look-around, back-references) and a generic code for the rest.
 */
export function goRegexError(pattern: string): string {
  const [code, expr] = regexProblem(pattern);
  return `error parsing regexp: ${code}: \`${expr}\``;
}

function regexProblem(pattern: string): [string, string] {
  const lookBehind = /\(\?<[=!]/.exec(pattern);
  if (lookBehind) return ["invalid named capture", pattern.slice(lookBehind.index)];
  const lookAhead = /\(\?[=!]/.exec(pattern);
  if (lookAhead) return ["invalid or unsupported Perl syntax", lookAhead[0]];
  const backReference = /\\[1-9]/.exec(pattern);
  if (backReference) return ["invalid escape sequence", backReference[0]];
  if (/^[*+?]/.test(pattern)) return ["missing argument to repetition operator", pattern.slice(0, 1)];
  const nested = /[*+?][*+]/.exec(pattern);
  if (nested) return ["invalid nested repetition operator", nested[0]];
  let message = "";
  try {
    new RegExp(pattern.replaceAll("(?P<", "(?<"));
  } catch (err) {
    message = (err as Error).message;
  }
  if (message.endsWith("Unmatched ')'")) return ["unexpected )", pattern];
  if (message.endsWith("Unterminated group")) return ["missing closing )", pattern];
  if (message.endsWith("Unterminated character class"))
    return ["missing closing ]", pattern.slice(pattern.lastIndexOf("["))];
  if (message.endsWith("numbers out of order in {} quantifier"))
    return ["invalid repeat count", /\{\d+,\d+\}/.exec(pattern)?.[0] ?? pattern];
  if (message.endsWith("\\ at end of pattern")) return ["trailing backslash at end of expression", ""];
  return ["invalid or unsupported syntax", pattern];
}

/** How many capturing groups a compiled pattern has (Go's NumSubexp). */
export function groupCount(re: RegExp): number {
  // An alternative that matches the empty string makes exec report every group.
  return (new RegExp(`${re.source}|`).exec("")?.length ?? 1) - 1;
}

/** How many distinct `{0}`..`{100}` placeholders a replacement uses. */
function placeholdersUsed(replacement: string): number {
  let used = 0;
  for (let i = 0; i <= 100; i++) if (replacement.includes(`{${i}}`)) used++;
  return used;
}

/**
 * Checks a FROM pattern against its TO replacement the way upstream does for name and answer rules; the
 * error message is upstream's, since the Corefile author reads it.
 */
export function checkedPattern(from: string, to: string): RegExp | string {
  if (from.length > MAX_REGEX_LENGTH) {
    return `regex pattern too long: ${from.length} > ${MAX_REGEX_LENGTH}`;
  }
  const re = compileGoRegex(from);
  if (!re) return `invalid regex matching pattern: ${from}`;
  if (placeholdersUsed(to) > groupCount(re)) {
    return `the rewrite regex pattern (${to}) uses more subexpressions than its corresponding matching regex pattern (${from})`;
  }
  return re;
}

/**
 * The replacement with `{n}` filled in from the first match of `re` in `src`, or undefined when there is no
 * match. Placeholders are filled one group after the other, as upstream does, so a group's text that itself
 * reads `{2}` is replaced again by a later group.
 */
export function substitute(re: RegExp, src: string, replacement: string): string | undefined {
  const m = re.exec(src);
  if (!m) return undefined;
  let out = replacement;
  for (const [i, value] of m.entries()) out = out.replaceAll(`{${i}}`, value ?? "");
  return out;
}
