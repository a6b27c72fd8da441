import { type Clock, realClock } from "../util/clock.js";
import { TokenBucket } from "../util/token-bucket.js";

/** Decides how long an item waits before being retried. */
export interface RateLimiter<T> {
  /** The delay for this retry of `item`, in ms; each call counts as a failure. */
  when(item: T): number;
  /** Clears the failure history of `item` (call it after success). */
  forget(item: T): void;
  numRequeues(item: T): number;
}

/** base * 2^failures, capped at max: per item. */
export class ItemExponentialRateLimiter<T> implements RateLimiter<T> {
  readonly #failures = new Map<T, number>();
  constructor(
    readonly baseDelayMs: number,
    readonly maxDelayMs: number,
  ) {}

  when(item: T): number {
    const exp = this.#failures.get(item) ?? 0;
    this.#failures.set(item, exp + 1);
    return Math.min(this.maxDelayMs, this.baseDelayMs * 2 ** exp);
  }
  forget(item: T): void {
    this.#failures.delete(item);
  }
  numRequeues(item: T): number {
    return this.#failures.get(item) ?? 0;
  }
}

/** One token bucket shared by all items: bounds the overall retry rate. */
export class BucketRateLimiter<T> implements RateLimiter<T> {
  readonly #bucket: TokenBucket;
  constructor(qps: number, burst: number, clock: Clock = realClock) {
    this.#bucket = new TokenBucket(qps, burst, clock);
  }
  when(_item: T): number {
    return this.#bucket.reserve();
  }
  forget(_item: T): void {}
  numRequeues(_item: T): number {
    return 0;
  }
}

/** The longest delay any of its limiters asks for. */
export class MaxOfRateLimiter<T> implements RateLimiter<T> {
  readonly #limiters: RateLimiter<T>[];
  constructor(...limiters: RateLimiter<T>[]) {
    this.#limiters = limiters;
  }
  when(item: T): number {
    return Math.max(0, ...this.#limiters.map((l) => l.when(item)));
  }
  forget(item: T): void {
    for (const l of this.#limiters) l.forget(item);
  }
  numRequeues(item: T): number {
    return Math.max(0, ...this.#limiters.map((l) => l.numRequeues(item)));
  }
}

export interface ControllerRateLimiterOptions {
  /** First per-item retry delay; 1 s by default (client-go uses 5 ms). */
  baseDelayMs?: number;
  /** Per-item cap; 1000 s by default. */
  maxDelayMs?: number;
  /** Global retry rate; 10 qps with a burst of 100 by default. */
  qps?: number;
  burst?: number;
  clock?: Clock;
}

/** Per-item exponential backoff, bounded overall by a token bucket. */
export function defaultControllerRateLimiter<T>(options: ControllerRateLimiterOptions = {}): RateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialRateLimiter<T>(options.baseDelayMs ?? 1000, options.maxDelayMs ?? 1_000_000),
    new BucketRateLimiter<T>(options.qps ?? 10, options.burst ?? 100, options.clock),
  );
}
