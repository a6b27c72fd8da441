import type { Clock, TimerHandle } from "./clock.js";

/**
 * A time limit as an AbortSignal, what a Go caller gets from context.WithTimeout: `signal` aborts when the limit
 * passes (its reason is the error given to `arm`) or when the parent signal aborts (with the parent's reason). The
 * limit can be moved (`arm` again: a watch has one limit for its response headers and another for its stream) and
 * must be cleared once the work it bounds is done, so that no timer outlives it.
 */
export class Deadline {
  readonly #clock: Clock;
  readonly #own = new AbortController();
  readonly signal: AbortSignal;
  #timer: TimerHandle;

  constructor(clock: Clock, parent?: AbortSignal) {
    this.#clock = clock;
    this.signal = parent ? AbortSignal.any([this.#own.signal, parent]) : this.#own.signal;
  }

  /** Aborts `signal` with `reason` after `ms`, replacing the limit armed before; 0 or less means no limit. */
  arm(ms: number, reason: () => Error): this {
    this.clear();
    if (ms > 0 && !this.#own.signal.aborted) {
      this.#timer = this.#clock.setTimeout(() => this.#own.abort(reason()), ms);
    }
    return this;
  }

  clear(): void {
    if (this.#timer === undefined) return;
    this.#clock.clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** The error the limit aborted with, once it has passed; undefined before (and when only the parent aborted). */
  get expired(): Error | undefined {
    return this.#own.signal.aborted ? (this.#own.signal.reason as Error) : undefined;
  }
}

/** The error a request or a command gets when its time limit passes; `timeoutMs` says which limit it was. */
export class TimeoutError extends Error {
  readonly timeoutMs: number;
  constructor(message: string, timeoutMs: number) {
    super(message);
    this.name = "TimeoutError";
    this.timeoutMs = timeoutMs;
  }
}

/**
 * `work`, or a rejection with the signal's reason as soon as `signal` aborts, whichever comes first: a bound that
 * holds even for work that does not watch the signal itself (a fake client, a request stuck in a library).
 */
export function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) {
    work.catch(() => {});
    return Promise.reject(signal.reason);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => {
      work.catch(() => {});
      reject(signal.reason);
    };
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}
