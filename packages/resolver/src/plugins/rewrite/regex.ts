/**
 * Regular expressions as the rewrite plugin's Corefile spells them (Go's RE2 syntax), run with JavaScript's
 * engine. The two agree on the patterns people write for names; what RE2 refuses (look-around,
 * back-references) is refused here too, so a Corefile CoreDNS rejects is not quietly accepted.
 */

/** CoreDNS's cap on a pattern's length, against patterns that take too much memory to compile. */
export const MAX_REGEX_LENGTH = 10000;

const RE2_UNSUPPORTED = /\(\?<?[=!]|\\[1-9]/;

/** Compiles an RE2-style pattern, or returns undefined where Go's regexp.Compile fails. */
export function compileGoRegex(pattern: string): RegExp | undefined {
  if (RE2_UNSUPPORTED.test(pattern)) return undefined;
  try {
    // RE2 names groups `(?P<name>...)`; JavaScript only knows `(?<name>...)`.
    return new RegExp(pattern.replaceAll("(?P<", "(?<"));
  } catch {
    return undefined;
  }
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
