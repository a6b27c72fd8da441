import { compileGoRegex, MAX_REGEX_LENGTH } from "../rewrite/regex.js";

/** A `match` pattern, compiled for JavaScript, with what the template data needs from it. */
export interface MatchRegex {
  /** The pattern as written, which Go's Regexp.String() returns (the `.Regex` value). */
  source: string;
  re: RegExp;
}

/** Go's leading flag group; only these flags have a JavaScript equivalent. */
const LEADING_FLAGS = /^\(\?([ims]+)\)/;

/**
 * Compiles a Go (RE2) pattern, or returns the error text upstream's setup puts after the pattern. A
 * leading `(?i)`, `(?m)` or `(?s)` becomes the JavaScript flag of the same meaning.
 */
export function compileMatch(pattern: string): MatchRegex | string {
  if (pattern.length > MAX_REGEX_LENGTH)
    return `regex pattern too long: ${pattern.length} > ${MAX_REGEX_LENGTH}`;
  const flags = LEADING_FLAGS.exec(pattern);
  const body = flags ? pattern.slice(flags[0].length) : pattern;
  const re = compileGoRegex(body);
  if (!re) return `could not parse regex: ${pattern}, error parsing regexp: invalid or unsupported syntax`;
  return { source: pattern, re: flags ? new RegExp(re.source, [...new Set(flags[1])].join("")) : re };
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
