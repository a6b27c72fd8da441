import { GoRegex, MAX_REGEX_LENGTH } from "../../plugin/go-regex.js";

/**
 * Compiles a `match` pattern (its `source` is the template data's `.Regex`), or returns the error text upstream's
 * setup puts after the pattern.
 */
export function compileMatch(pattern: string): GoRegex | string {
  if (pattern.length > MAX_REGEX_LENGTH)
    return `regex pattern too long: ${pattern.length} > ${MAX_REGEX_LENGTH}`;
  const re = GoRegex.compile(pattern);
  return typeof re === "string" ? `could not parse regex: ${pattern}, ${re}` : re;
}

/**
 * Go's FindStringSubmatch plus upstream's Group map: every group by its number, then named groups by
 * name (a group that took no part matches ""). Undefined when the name does not match.
 */
export function matchName(
  regex: GoRegex,
  name: string,
): { match: string[]; group: Map<string, string> } | undefined {
  const m = regex.exec(name);
  if (!m) return undefined;
  const group = new Map(m.groups.map((s, i) => [String(i), s] as const));
  for (const [key, value] of m.named) group.set(key, value);
  return { match: m.groups, group };
}
