// The Go (RE2) regular expressions that rewrite, template and errors compile from a Corefile: Go's syntax, Go's
// refusals in Go's words, and matching that never backtracks (apps/cluster-dns/test/*.diff.test.ts put the
// same patterns through CoreDNS's binary).
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { GoRegex } from "../../src/plugin/go-regex.js";
import { substitute } from "../../src/plugins/rewrite/regex.js";
import { compileMatch, matchName } from "../../src/plugins/template/regex.js";

function compiled(pattern: string): GoRegex {
  const re = GoRegex.compile(pattern);
  assert.ok(re instanceof GoRegex, `${pattern}: ${String(re)}`);
  return re;
}

describe("Go regular expressions", () => {
  test("Go's syntax: (?P<name>), (?<name>), leading flags, group counts", () => {
    const re = compiled("(?i)^(?P<host>[a-z]+)-(?<n>[0-9]+)(x)?\\.");
    assert.equal(re.groupCount, 3);
    assert.deepEqual(re.exec("WEB-12.example."), {
      groups: ["WEB-12.", "WEB", "12", ""],
      named: new Map([
        ["host", "WEB"],
        ["n", "12"],
      ]),
    });
    assert.equal(re.exec("web.example."), undefined);
    assert.equal(re.source, "(?i)^(?P<host>[a-z]+)-(?<n>[0-9]+)(x)?\\.");
  });

  test("what RE2 refuses, in regexp.Compile's words", () => {
    const cases: [string, string][] = [
      ["a**", "error parsing regexp: invalid nested repetition operator: `**`"],
      ["(?=x)", "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"],
      ["(?<!x)y", "error parsing regexp: invalid named capture: `(?<!x)y`"],
      ["(a)\\1", "error parsing regexp: invalid escape sequence: `\\1`"],
      ["x{1001}", "error parsing regexp: invalid repeat count: `{1001}`"],
      ["(a", "error parsing regexp: missing closing ): `(a`"],
      ["[a", "error parsing regexp: missing closing ]: `[a`"],
      ["ab\\", "error parsing regexp: trailing backslash at end of expression: ``"],
    ];
    for (const [pattern, error] of cases) assert.equal(GoRegex.compile(pattern), error, pattern);
  });

  // Under a backtracking engine each of these takes longer than the universe's age; the test's own timeout
  // turns a regression into a failure instead of a hung run.
  test("nested repeats against crafted names finish: matching is linear", { timeout: 20_000 }, () => {
    const name = `${"a".repeat(5000)}.redos.test.`;
    assert.equal(compiled("^(a+)+b").test(name), false);
    assert.equal(compiled("((a|aa)*)*c").test(name), false);
    assert.equal(substitute(compiled("(a+)+b\\.redos"), name, "{1}.x"), undefined);
    const match = compileMatch("^(a*)*(a*)*$");
    assert.ok(match instanceof GoRegex);
    assert.equal(matchName(match, name), undefined);
  });

  test("leftmost-first, as Go's FindStringSubmatch", () => {
    // The first alternative that matches wins, not the longest (POSIX would take "ab").
    assert.deepEqual(compiled("(a|ab)").exec("ab")?.groups, ["a", "a"]);
    assert.deepEqual(compiled("(a|ab)(c|bcd)").exec("abcd")?.groups, ["abcd", "a", "bcd"]);
    assert.equal(substitute(compiled("^(.*)-(blue)\\.x$"), "a-b-blue.x", "{2}.{1}"), "blue.a-b");
  });
});
