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
