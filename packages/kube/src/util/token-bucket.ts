import type { Clock } from "./clock.js";

/**
 * A token bucket in the style of golang.org/x/time/rate: it starts full
 * (`burst` tokens), refills at `qps` tokens per second, and a reservation may
 * drive it negative, which is how callers learn how long to wait.
 */
export class TokenBucket {
  readonly qps: number;
  readonly burst: number;
  readonly #clock: Clock;
  #tokens: number;
  #lastMs: number;

  constructor(qps: number, burst: number, clock: Clock) {
    this.qps = qps;
    this.burst = burst;
    this.#clock = clock;
    this.#tokens = burst;
    this.#lastMs = clock.now();
  }

  #refill(): void {
    const now = this.#clock.now();
    const elapsedS = Math.max(0, now - this.#lastMs) / 1000;
    this.#tokens = Math.min(this.burst, this.#tokens + elapsedS * this.qps);
    this.#lastMs = now;
  }

  /** Takes a token if one is available now; never waits. */
  tryTake(): boolean {
    this.#refill();
    if (this.#tokens < 1) return false;
    this.#tokens -= 1;
    return true;
  }

  /** Reserves a token and returns how many ms the caller must wait before using it. */
  reserve(): number {
    this.#refill();
    this.#tokens -= 1;
    if (this.#tokens >= 0) return 0;
    return (-this.#tokens / this.qps) * 1000;
  }
}
