// Suggestions for a mistyped name, shared by every command line of the project: the programs' flags (parse-flags.ts)
// and the lab's commands, flags and values.

/** Edit distance (insertions, deletions, substitutions), ignoring case. */
export function editDistance(a: string, b: string): number {
  const s = a.toLowerCase();
  const t = b.toLowerCase();
  let previous = Array.from({ length: t.length + 1 }, (_, j) => j);
  for (let i = 1; i <= s.length; i++) {
    const row = [i];
    for (let j = 1; j <= t.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (s[i - 1] === t[j - 1] ? 0 : 1);
      row.push(Math.min((previous[j] ?? 0) + 1, (row[j - 1] ?? 0) + 1, substitution));
    }
    previous = row;
  }
  return previous[t.length] ?? 0;
}

/**
 * The candidates a typo probably meant, by cobra's rule for commands (pflag and Go's flag package suggest
 * nothing): at most two edits away, or starting with what was typed (so `switchyard-lab contr` finds
 * `controlplane`). Names that start with it first, then the closest; ties keep the table's order.
 */
export function suggestionsFor(typed: string, candidates: readonly string[], maxDistance = 2): string[] {
  if (typed === "") return [];
  return candidates
    .map((name, order) => ({
      name,
      order,
      distance: editDistance(typed, name),
      prefix: name.toLowerCase().startsWith(typed.toLowerCase()),
    }))
    .filter((c) => c.name !== typed && (c.distance <= maxDistance || c.prefix))
    .sort((a, b) => Number(b.prefix) - Number(a.prefix) || a.distance - b.distance || a.order - b.order)
    .map((c) => c.name);
}

/** `; did you mean "a"?` / `; did you mean "a" or "b"?`, or nothing when there is no candidate. */
export function didYouMean(suggestions: readonly string[], quote: (s: string) => string = (s) => `"${s}"`) {
  if (suggestions.length === 0) return "";
  const shown = suggestions.slice(0, 3).map(quote);
  const last = shown.pop();
  return `; did you mean ${shown.length > 0 ? `${shown.join(", ")} or ${last}` : last}?`;
}
