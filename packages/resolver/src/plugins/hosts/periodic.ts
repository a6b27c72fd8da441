import type { Timers } from "../../server/timers.js";

/** Node fires a timer longer than this at once (with a warning), so longer waits are taken in steps. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `fn` every `periodMs` (Go's time.Ticker as the hosts plugin uses it) until the returned function
 * is called. The next wait starts after `fn` returns; `fn` is synchronous, so that is the same period.
 */
export function periodically(timers: Timers, periodMs: number, fn: () => void): () => void {
  let handle: unknown;
  let stopped = false;
  const wait = (left: number) => {
    const step = Math.min(left, MAX_TIMER_MS);
    handle = timers.setTimeout(() => {
      if (stopped) return;
      if (left > step) return wait(left - step);
      fn();
      wait(periodMs);
    }, step);
  };
  wait(periodMs);
  return () => {
    stopped = true;
    timers.clearTimeout(handle);
  };
}
