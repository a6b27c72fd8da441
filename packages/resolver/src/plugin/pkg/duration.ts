/** Go-style durations as CoreDNS writes them: `5s`, `1m30s`, `250ms`. Milliseconds, or undefined. */
export function parseDuration(text: string): number | undefined {
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) return undefined;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60000, h: 3600000 };
  let total = 0;
  for (const m of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g))
    total += Number(m[1]) * (unit[m[2] ?? "s"] ?? 0);
  return total;
}
