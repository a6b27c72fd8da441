/**
 * Go's time.Duration as text, in milliseconds: flags, config files and Corefiles take durations the way the
 * upstream components' do, and print them back (`--write-config-to`, `/configz`, setup errors) as they do.
 */

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
 * Go's time.ParseDuration ("1s", "1m30s", "250ms", ".5s", "-1h", "0"), in milliseconds. Undefined for anything
 * Go rejects; goDurationError says how Go words it.
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

/** `ns` nanoseconds in units of `unit` (10^places ns), as Go's fmtFrac and fmtInt print them: no trailing zeros. */
function decimal(ns: number, unit: number, places: number): string {
  const whole = Math.floor(ns / unit);
  const frac = ns - whole * unit;
  if (frac === 0) return String(whole);
  return `${whole}.${String(frac).padStart(places, "0").replace(/0+$/, "")}`;
}

/**
 * Go's Duration.String() for a number of milliseconds, in whole nanoseconds as Go holds them: "0s", "500ns",
 * "1.5µs", "250ms", "1.5s", "15m0s", "24h0m0s", "-5s".
 */
export function formatGoDuration(ms: number): string {
  const ns = Math.round(Math.abs(ms) * 1e6);
  if (ns === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  // Under a second Go picks the largest unit that keeps a whole number in front of the point.
  if (ns < 1e3) return `${sign}${ns}ns`;
  if (ns < 1e6) return `${sign}${decimal(ns, 1e3, 3)}µs`;
  if (ns < 1e9) return `${sign}${decimal(ns, 1e6, 6)}ms`;
  const seconds = `${decimal(ns % 60e9, 1e9, 9)}s`;
  const minutes = Math.floor(ns / 60e9);
  if (minutes === 0) return `${sign}${seconds}`;
  // Go stops at hours: days can be of different lengths.
  const hours = Math.floor(minutes / 60);
  if (hours === 0) return `${sign}${minutes}m${seconds}`;
  return `${sign}${hours}h${minutes % 60}m${seconds}`;
}

const GO_UNITS = new Set(["ns", "us", "µs", "μs", "ms", "s", "m", "h"]);

/**
 * The error Go's time.ParseDuration returns for text it rejects, which setups print as they get it:
 * `time: invalid duration "x"`, `time: missing unit in duration "1"`, `time: unknown unit "d" in duration "1d"`.
 * Walks the text the way Go does, so the first problem found is the one named.
 */
export function goDurationError(text: string): string {
  const quoted = JSON.stringify(text);
  const invalid = `time: invalid duration ${quoted}`;
  let rest = text.replace(/^[-+]/, "");
  if (rest === "") return invalid;
  while (rest !== "") {
    const number = /^(\d*)(?:\.(\d*))?/.exec(rest) as RegExpExecArray;
    if ((number[1] ?? "") === "" && (number[2] ?? "") === "") return invalid;
    rest = rest.slice(number[0].length);
    const unit = /^[^0-9.]*/.exec(rest)?.[0] ?? "";
    if (unit === "") return `time: missing unit in duration ${quoted}`;
    if (!GO_UNITS.has(unit)) return `time: unknown unit ${JSON.stringify(unit)} in duration ${quoted}`;
    rest = rest.slice(unit.length);
  }
  // Every part read: what is left is Go's overflow.
  return invalid;
}
