/**
 * Regular expressions as a Corefile spells them (Go's RE2 syntax), matched in time linear in the text.
 *
 * The patterns of `rewrite`, `template` and `errors` run against names and texts a client chooses. V8's own
 * engine backtracks: `^((a+)+)+$` against thirty `a`s and a `!` holds the one event loop for seconds, and every
 * other query waits. RE2 (what Go's regexp implements, and so CoreDNS) never backtracks, so a pattern's cost is
 * bounded by the length of the name. re2js is a port of RE2 to JavaScript: the same syntax, the same refusals
 * (look-around, back-references, repeats over 1000) and Go's error texts, with no native code to build.
 */
import { RE2JS, RE2JSSyntaxException } from "re2js";

/** CoreDNS's cap on a pattern's length, against patterns that take too much memory to compile. */
export const MAX_REGEX_LENGTH = 10000;

/** A compiled pattern; `source` is the pattern as written, which Go's Regexp.String() returns. */
export class GoRegex {
  private constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {}

  /** The pattern, or Go's regexp.Compile error text (`error parsing regexp: CODE: \`EXPR\``). */
  static compile(pattern: string): GoRegex | string {
    try {
      return new GoRegex(pattern, RE2JS.compile(pattern));
    } catch (err) {
      if (!(err instanceof RE2JSSyntaxException)) throw err;
      // Go prints the fragment even when it is empty (a trailing backslash): `...expression: ``.
      return `error parsing regexp: ${err.getDescription()}: \`${err.getPattern() ?? ""}\``;
    }
  }

  /** How many capturing groups the pattern has (Go's NumSubexp). */
  get groupCount(): number {
    return this.re.groupCount();
  }

  /** Whether the pattern matches anywhere in `text` (Go's MatchString). */
  test(text: string): boolean {
    return this.re.matcher(text).find();
  }

  /**
   * Go's FindStringSubmatch: the whole match and every group by number ("" for a group that took no part),
   * with the named groups by name; undefined when nothing matches.
   */
  exec(text: string): { groups: string[]; named: Map<string, string> } | undefined {
    const m = this.re.matcher(text);
    if (!m.find()) return undefined;
    const groups: string[] = [];
    for (let i = 0; i <= this.re.groupCount(); i++) groups.push(m.group(i) ?? "");
    const named = new Map<string, string>();
    for (const [name, index] of Object.entries(this.re.namedGroups())) named.set(name, groups[index] ?? "");
    return { groups, named };
  }
}
