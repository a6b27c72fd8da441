import { compileGoRegex, goRegexError, MAX_REGEX_LENGTH } from "../rewrite/regex.js";

/** A `match` pattern, compiled for JavaScript, with what the template data needs from it. */
export interface MatchRegex {
  /** The pattern as written, which Go's Regexp.String() returns (the `.Regex` value). */
  source: string;
  re: RegExp;
}

/** Compiles a Go (RE2) pattern, or returns the error text upstream's setup puts after the pattern. */
export function compileMatch(pattern: string): MatchRegex | string {
  if (pattern.length > MAX_REGEX_LENGTH)
    return `regex pattern too long: ${pattern.length} > ${MAX_REGEX_LENGTH}`;
  const re = compileGoRegex(pattern);
  if (!re) return `could not parse regex: ${pattern}, ${goRegexError(pattern)}`;
  return { source: pattern, re };
}

/**
 * Go's FindStringSubmatch plus upstream's Group map: every group by its number, then named groups by
 * name (a group that took no part matches ""). Undefined when the name does not match.
 */
export function matchName(
  regex: MatchRegex,
  name: string,
): { match: string[]; group: Map<string, string> } | undefined {
  const m = regex.re.exec(name);
  if (!m) return undefined;
  const match = [...m].map((s) => s ?? "");
  const group = new Map(match.map((s, i) => [String(i), s] as const));
  for (const [key, value] of Object.entries(m.groups ?? {})) group.set(key, value ?? "");
  return { match, group };
}
