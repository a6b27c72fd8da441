/**
 * The rewrite plugin's regex rules: a pattern checked against its replacement, and the replacement filled in
 * from a match. Patterns compile with the shared Go (RE2) engine, so matching a client's name is linear.
 */
import { GoRegex, MAX_REGEX_LENGTH } from "../../plugin/go-regex.js";

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
export function checkedPattern(from: string, to: string): GoRegex | string {
  if (from.length > MAX_REGEX_LENGTH) {
    return `regex pattern too long: ${from.length} > ${MAX_REGEX_LENGTH}`;
  }
  const re = GoRegex.compile(from);
  if (typeof re === "string") return `invalid regex matching pattern: ${from}`;
  if (placeholdersUsed(to) > re.groupCount) {
    return `the rewrite regex pattern (${to}) uses more subexpressions than its corresponding matching regex pattern (${from})`;
  }
  return re;
}

/**
 * The replacement with `{n}` filled in from the first match of `re` in `src`, or undefined when there is no
 * match. Placeholders are filled one group after the other, as upstream does, so a group's text that itself
 * reads `{2}` is replaced again by a later group.
 */
export function substitute(re: GoRegex, src: string, replacement: string): string | undefined {
  const m = re.exec(src);
  if (!m) return undefined;
  let out = replacement;
  for (const [i, value] of m.groups.entries()) out = out.replaceAll(`{${i}}`, value);
  return out;
}
