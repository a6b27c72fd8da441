// Canonical comparison of iptables-restore / iptables-save text, with a readable diff.
import assert from "node:assert/strict";
import { lineDiff } from "./nft-helpers.js";

/**
 * Drops blanks, comments and counters; per table (sorted), chain declarations sorted, then
 * rules grouped by chain (chains sorted) with the order inside a chain kept. `-X` lines,
 * which only appear in restore input, come last.
 */
export function sortIPTables(text: string): string[] {
  const tables = new Map<string, { decls: string[]; rules: Map<string, string[]>; other: string[] }>();
  let current: ReturnType<typeof tables.get>;
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line === "COMMIT") continue;
    if (line.startsWith("*")) {
      current = tables.get(line) ?? { decls: [], rules: new Map(), other: [] };
      tables.set(line, current);
      continue;
    }
    if (!current) continue;
    if (line.startsWith(":")) {
      current.decls.push(line.replace(/\[\d+:\d+\]$/, "[0:0]"));
      continue;
    }
    const m = /^-A (\S+) /.exec(line);
    if (!m) {
      current.other.push(line);
      continue;
    }
    const chain = m[1] ?? "";
    current.rules.set(chain, [...(current.rules.get(chain) ?? []), line]);
  }
  const out: string[] = [];
  for (const name of [...tables.keys()].sort()) {
    const t = tables.get(name);
    if (!t) continue;
    out.push(name, ...t.decls.sort());
    for (const chain of [...t.rules.keys()].sort()) out.push(...(t.rules.get(chain) ?? []));
    out.push(...t.other.sort(), "COMMIT");
  }
  return out;
}

export function assertIPTablesEqual(
  actual: string,
  expected: string,
  message = "iptables rules differ",
): void {
  const a = sortIPTables(actual);
  const e = sortIPTables(expected);
  if (a.join("\n") !== e.join("\n")) assert.fail(`${message}:\n${lineDiff(e, a)}`);
}

/** Only the lines (and their table headers) for which `keep` holds. */
export function filterLines(text: string, keep: (line: string) => boolean): string {
  return text
    .split("\n")
    .filter((l) => l.startsWith("*") || l === "COMMIT" || keep(l))
    .join("\n");
}
