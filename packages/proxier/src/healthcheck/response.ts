// Health answers as plain values, so handlers are pure and the HTTP layer stays thin.

export interface HealthResponse {
  readonly status: number;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

export const JSON_HEADERS = {
  "Content-Type": "application/json",
  "X-Content-Type-Options": "nosniff",
} as const;

/**
 * A time as Go's time.Time.String() prints it in UTC, e.g. "2024-05-01 10:00:00.5 +0000 UTC"
 * (fraction trimmed of trailing zeros, absent when zero), which kube-proxy's health bodies use.
 */
export function goTimeString(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number, w = 2) => String(n).padStart(w, "0");
  const date = `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const frac = d.getUTCMilliseconds() === 0 ? "" : `.${pad(d.getUTCMilliseconds(), 3).replace(/0+$/, "")}`;
  return `${date} ${time}${frac} +0000 UTC`;
}

/** Go's zero time.Time, which upstream prints for "never". */
export const GO_ZERO_TIME = "0001-01-01 00:00:00 +0000 UTC";
