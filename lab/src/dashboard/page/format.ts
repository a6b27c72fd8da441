// How numbers and times read on the page.

export const clock = (ms: number) => new Date(ms).toLocaleTimeString("en-GB", { hour12: false });

/** "3s ago", "2m ago" from `now`. */
export function ago(ms: number | undefined, now: number): string {
  if (ms === undefined) return "-";
  const s = Math.max(0, Math.round((now - ms) / 1000));
  return s < 120 ? `${s}s ago` : `${Math.round(s / 60)}m ago`;
}

export function millis(ms: number | undefined): string {
  if (ms === undefined) return "-";
  if (ms === 0) return "0ms";
  if (ms < 10) return `${ms.toFixed(2)}ms`;
  return ms < 1000 ? `${ms.toFixed(0)}ms` : `${(ms / 1000).toFixed(2)}s`;
}

export const percent = (ratio: number | undefined) =>
  ratio === undefined ? "-" : `${(ratio * 100).toFixed(1)}%`;

export const perSecond = (v: number | undefined) => (v === undefined ? "-" : v.toFixed(1));
