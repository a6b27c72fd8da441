/** An opaque timer handle; real timers return a Node Timeout, fake ones a number. */
export type TimerHandle = unknown;

/**
 * Time and timers in one seam, so tests can drive every delay in the runtime
 * (backoff, stall guards, lease renewals, token buckets) with a fake clock.
 */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

// Global timers are looked up at call time, not captured, so test spies installed later still apply.
export const realClock: Clock = {
  now: () => Date.now(),
  // Timers stay referenced: a program awaiting `elector.run()` or a running informer must not exit just
  // because nothing else is pending. Stopping the component clears them.
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/**
 * The real clock for periodic work that is never the only thing a program waits for (a proxier's resync, its
 * retries): its timers are unref'd, so a process with nothing else pending exits instead of waiting for them.
 */
export const backgroundClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms).unref(),
  clearTimeout: (handle) => clearTimeout(handle as ReturnType<typeof setTimeout>),
};

/** Resolves after `ms` on `clock`, or rejects with the signal's reason once it aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(handle);
      reject(signal?.reason);
    };
    const handle = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}
