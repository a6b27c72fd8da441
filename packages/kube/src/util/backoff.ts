export interface BackoffOptions {
  /** First delay in ms. */
  initialMs?: number;
  /** Cap in ms. */
  maxMs?: number;
  factor?: number;
  /** Fraction of the delay added at random, 0..1. */
  jitter?: number;
  /** Returns a number in [0, 1); injectable for deterministic tests. */
  random?: () => number;
}

/**
 * Capped exponential backoff with jitter. `next()` returns the delay to wait
 * now and grows the following one; `reset()` starts again from the initial delay.
 */
export class Backoff {
  readonly #initialMs: number;
  readonly #maxMs: number;
  readonly #factor: number;
  readonly #jitter: number;
  readonly #random: () => number;
  #currentMs: number;

  constructor(options: BackoffOptions = {}) {
    this.#initialMs = options.initialMs ?? 200;
    this.#maxMs = options.maxMs ?? 30_000;
    this.#factor = options.factor ?? 2;
    this.#jitter = options.jitter ?? 0.1;
    this.#random = options.random ?? Math.random;
    this.#currentMs = this.#initialMs;
  }

  next(): number {
    const base = this.#currentMs;
    this.#currentMs = Math.min(this.#maxMs, this.#currentMs * this.#factor);
    // Jitter only ever lengthens the wait, and never past the cap.
    return Math.min(this.#maxMs, base + base * this.#jitter * this.#random());
  }

  reset(): void {
    this.#currentMs = this.#initialMs;
  }
}
