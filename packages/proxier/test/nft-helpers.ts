// Canonical comparison of nft scripts, with a readable diff on mismatch.
import assert from "node:assert/strict";

const KIND_ORDER = ["table", "chain", "set", "map", "counter", "rule", "element"];

function kindAndName(line: string): [number, string] {
  const m = /^(?:add|create|insert|flush|delete|destroy) (\w+) \S+ \S+ ?(\S*)/.exec(line);
  return [KIND_ORDER.indexOf(m?.[1] ?? ""), m?.[2] ?? ""];
}

/** Drops blanks and comments, sorts by object kind then name; rule order within a chain is kept. */
export function sortNFTScript(text: string): string[] {
  const lines = text
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
  const keyed = lines.map((line, index) => ({ line, index, kn: kindAndName(line) }));
  keyed.sort((a, b) => {
    if (a.kn[0] !== b.kn[0]) return a.kn[0] - b.kn[0];
    if (a.kn[1] !== b.kn[1]) return a.kn[1] < b.kn[1] ? -1 : 1;
    // Rules keep their order; other objects of one name (elements) sort by text.
    if (KIND_ORDER[a.kn[0]] === "rule") return a.index - b.index;
    return a.line < b.line ? -1 : a.line > b.line ? 1 : 0;
  });
  return keyed.map((k) => k.line);
}

/** Line diff (LCS) with "-" for expected-only and "+" for actual-only lines. */
export function lineDiff(expected: string[], actual: string[]): string {
  const n = expected.length;
  const m = actual.length;
  const lcs: number[][] = Array.from({ length: n + 1 }, () => new Array<number>(m + 1).fill(0));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      const row = lcs[i] as number[];
      row[j] =
        expected[i] === actual[j]
          ? (lcs[i + 1]?.[j + 1] ?? 0) + 1
          : Math.max(lcs[i + 1]?.[j] ?? 0, row[j + 1] ?? 0);
    }
  }
  const out: string[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && expected[i] === actual[j]) {
      out.push(`  ${expected[i]}`);
      i++;
      j++;
    } else if (j < m && (i >= n || (lcs[i]?.[j + 1] ?? 0) >= (lcs[i + 1]?.[j] ?? 0))) {
      out.push(`+ ${actual[j]}`);
      j++;
    } else {
      out.push(`- ${expected[i]}`);
      i++;
    }
  }
  return out.join("\n");
}

export function assertNFTEqual(actual: string, expected: string, message = "nft scripts differ"): void {
  const a = sortNFTScript(actual);
  const e = sortNFTScript(expected);
  if (a.join("\n") !== e.join("\n")) assert.fail(`${message}:\n${lineDiff(e, a)}`);
}

/** Removes the common indentation of a template literal. */
export function dedent(text: string): string {
  const lines = text.replace(/^\n/, "").split("\n");
  const indent = Math.min(
    ...lines.filter((l) => l.trim() !== "").map((l) => /^\s*/.exec(l)?.[0].length ?? 0),
  );
  return lines.map((l) => l.slice(indent)).join("\n");
}
