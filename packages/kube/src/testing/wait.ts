import { realClock, sleep as sleepOn } from "../util/clock.js";

/** Resolves after `ms` of real time, or rejects with the signal's reason once it aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return sleepOn(realClock, ms, signal);
}

export interface EventuallyOptions {
  /** Bounds a hang; nothing asserts on time, so the default is generous. Default 90 s. */
  timeoutMs?: number;
  /** The pause between probes. Default 100 ms. */
  intervalMs?: number;
  /** Called once on timeout; its text (the state last seen) is appended to the error. */
  describe?: () => string | Promise<string>;
}

/** What a probe answers: a value when the wait is over, undefined or false while it is not. */
type Probe<T> = () => T | undefined | false | Promise<T | undefined | false>;

/**
 * Polls `probe` until it returns something other than undefined or false, and resolves with that.
 * A probe that throws is retried too (a server still starting refuses connections); its last error is
 * reported, as cause and in the message, if the deadline passes first.
 */
export async function eventually<T>(
  what: string,
  probe: Probe<T>,
  options: EventuallyOptions = {},
): Promise<T> {
  const { timeoutMs = 90_000, intervalMs = 100, describe } = options;
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const reason =
        lastError === undefined
          ? ""
          : `: ${lastError instanceof Error ? lastError.message : String(lastError)}`;
      const state = describe ? `\n${await describe()}` : "";
      throw new Error(`gave up after ${timeoutMs} ms waiting for ${what}${reason}${state}`, {
        cause: lastError,
      });
    }
    await sleep(intervalMs);
  }
}
