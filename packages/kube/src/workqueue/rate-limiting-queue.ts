import type { TimerHandle } from "../util/clock.js";
import { type QueueOptions, WorkQueue } from "./queue.js";
import { defaultControllerRateLimiter, type RateLimiter } from "./rate-limiters.js";

export interface RateLimitingQueueOptions<T> extends QueueOptions {
  /** defaultControllerRateLimiter() unless given. */
  rateLimiter?: RateLimiter<T>;
}

/**
 * A work queue with delayed adds and per-item rate-limited retries: the queue
 * a controller uses. Delayed adds of the same item keep the earliest time.
 */
export class RateLimitingQueue<T> extends WorkQueue<T> {
  readonly #limiter: RateLimiter<T>;
  readonly #waiting = new Map<T, { readyAt: number; timer: TimerHandle }>();

  constructor(options: RateLimitingQueueOptions<T> = {}) {
    super(options);
    this.#limiter = options.rateLimiter ?? defaultControllerRateLimiter<T>({ clock: this.clock });
  }

  /** Adds `item` once `ms` have passed. */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    if (ms <= 0) {
      this.add(item);
      return;
    }
    const readyAt = this.clock.now() + ms;
    const pending = this.#waiting.get(item);
    if (pending && pending.readyAt <= readyAt) return;
    if (pending) this.clock.clearTimeout(pending.timer);
    const timer = this.clock.setTimeout(() => {
      this.#waiting.delete(item);
      this.add(item);
    }, ms);
    this.#waiting.set(item, { readyAt, timer });
  }

  /** Adds `item` after the delay its rate limiter assigns; counts as a retry. */
  addRateLimited(item: T): void {
    this.metrics.retry();
    this.addAfter(item, this.#limiter.when(item));
  }

  /** Ends the retry history of `item`: call after it was processed successfully. */
  forget(item: T): void {
    this.#limiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.#limiter.numRequeues(item);
  }

  /** Items waiting for a delayed add. */
  waitingLen(): number {
    return this.#waiting.size;
  }

  protected override onShutDown(): void {
    for (const { timer } of this.#waiting.values()) this.clock.clearTimeout(timer);
    this.#waiting.clear();
  }
}
