import { parseDuration } from "../plugins/kubernetes/setup.js";

/**
 * Go's time.ParseDuration, in milliseconds: the shared unsigned parser plus what it leaves out, a sign and a
 * bare "0". Undefined when Go would return an error.
 */
export function parseGoDuration(text: string): number | undefined {
  const sign = text.startsWith("-") ? -1 : 1;
  const body = /^[-+]/.test(text) ? text.slice(1) : text;
  const ms = body === "0" ? 0 : parseDuration(body);
  return ms === undefined ? undefined : sign * ms;
}

/** Go's Duration.String for a number of milliseconds: `0s`, `500ms`, `1.5s`, `2m0s`, `25h0m0s`, `-5s`. */
export function goDurationString(ms: number): string {
  if (ms === 0) return "0s";
  const sign = ms < 0 ? "-" : "";
  let rest = Math.abs(ms);
  if (rest < 1) return `${sign}${round(rest * 1000)}µs`;
  if (rest < 1000) return `${sign}${round(rest)}ms`;
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = `${round(rest / 1000)}s`;
  if (hours > 0) return `${sign}${hours}h${minutes}m${seconds}`;
  if (minutes > 0) return `${sign}${minutes}m${seconds}`;
  return `${sign}${seconds}`;
}

/** Drops the floating-point noise that sums of decimal fractions leave (Go works in whole nanoseconds). */
const round = (n: number) => Number(n.toFixed(9));

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
