const UNIT_MS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  // Go takes both micro signs: U+00B5 above and the Greek letter U+03BC.
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Go's time.Duration is an int64 of nanoseconds: anything longer is an error there. */
const MAX_MS = (2 ** 63 - 1) / 1e6;

/**
 * Parses a Go duration ("1s", "1m30s", "250ms", "0") into milliseconds, so flags and config files read the way
 * the upstream components' do. Returns undefined for anything Go's time.ParseDuration rejects.
 */
export function parseGoDuration(text: string): number | undefined {
  const match = /^([+-]?)(.*)$/.exec(text);
  const sign = match?.[1] === "-" ? -1 : 1;
  let rest = match?.[2] ?? "";
  if (rest === "0") return 0;
  if (rest === "") return undefined;
  let total = 0;
  while (rest !== "") {
    const part = /^(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/.exec(rest);
    const unit = part?.[2];
    if (part === null || unit === undefined) return undefined;
    total += Number(part[1]) * (UNIT_MS[unit] ?? 0);
    if (total > MAX_MS) return undefined;
    rest = rest.slice(part[0].length);
  }
  return sign * total;
}

/**
 * Milliseconds as Go's time.Duration.String() writes them ("0s", "250ms", "1.5s", "15m0s", "24h0m0s"), so a config
 * written back (`--write-config-to`, `/configz`) reads as upstream's does.
 */
export function formatGoDuration(ms: number): string {
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  const abs = Math.abs(ms);
  if (abs < 1000) return `${sign}${+abs.toFixed(6)}ms`;
  const h = Math.floor(abs / 3_600_000);
  const m = Math.floor((abs % 3_600_000) / 60_000);
  const s = `${+((abs % 60_000) / 1000).toFixed(9)}s`;
  if (h > 0) return `${sign}${h}h${m}m${s}`;
  if (m > 0) return `${sign}${m}m${s}`;
  return `${sign}${s}`;
}
