import type { Registry } from "prom-client";
import { type Clock, realClock } from "../util/clock.js";
import { createQueueMetrics, noopQueueMetrics, type QueueMetrics } from "./metrics.js";

export interface QueueOptions {
  /** The `name` label on the workqueue_* metrics. */
  name?: string;
  clock?: Clock;
  /** Registry for metrics; the prom-client default registry if omitted. `false` turns metrics off. */
  registry?: Registry | false;
}

export type GetResult<T> = { shutdown: false; item: T } | { shutdown: true };

/**
 * client-go's work queue: an item is never handed to two workers at once,
 * adding an item that is already waiting is a no-op, and an item re-added
 * while being processed is queued again once `done` is called for it.
 * Items are compared with SameValueZero, so use string keys.
 */
export class WorkQueue<T> {
  readonly name: string;
  protected readonly clock: Clock;
  protected readonly metrics: QueueMetrics;
  // Order of work; every entry is also in #dirty.
  readonly #queue: T[] = [];
  // Needs processing (waiting, or re-added while processing).
  readonly #dirty = new Set<T>();
  // Handed out and not yet done.
  readonly #processing = new Set<T>();
  readonly #getWaiters: (() => void)[] = [];
  readonly #drainWaiters: (() => void)[] = [];
  #shuttingDown = false;

  constructor(options: QueueOptions = {}) {
    this.name = options.name ?? "";
    this.clock = options.clock ?? realClock;
    this.metrics =
      options.registry === false || !options.name
        ? noopQueueMetrics
        : createQueueMetrics(options.name, this.clock, options.registry);
  }

  add(item: T): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return;
    this.metrics.add(item);
    this.#dirty.add(item);
    if (this.#processing.has(item)) return;
    this.#queue.push(item);
    this.#getWaiters.shift()?.();
  }

  /** Items waiting to be processed (not counting those in flight). */
  len(): number {
    return this.#queue.length;
  }

  /**
   * The next item, waiting for one if needed. After shutDown, remaining items
   * are still handed out; then every call resolves `{ shutdown: true }`.
   */
  async get(): Promise<GetResult<T>> {
    while (this.#queue.length === 0 && !this.#shuttingDown) {
      await new Promise<void>((resolve) => this.#getWaiters.push(resolve));
    }
    const item = this.#queue.shift();
    if (item === undefined) return { shutdown: true };
    this.metrics.get(item);
    this.#processing.add(item);
    this.#dirty.delete(item);
    return { shutdown: false, item };
  }

  /** Marks `item` finished; if it was re-added meanwhile, it is queued again now. */
  done(item: T): void {
    this.metrics.done(item);
    this.#processing.delete(item);
    // Like client-go, a re-add accepted before shutdown is still processed during a drain.
    if (this.#dirty.has(item)) {
      this.#queue.push(item);
      this.#getWaiters.shift()?.();
    }
    if (this.#processing.size === 0) for (const wake of this.#drainWaiters.splice(0)) wake();
  }

  /** Stops accepting items; waiting `get` calls resolve once the queue is empty. */
  shutDown(): void {
    this.#shuttingDown = true;
    this.onShutDown();
    for (const wake of this.#getWaiters.splice(0)) wake();
    this.metrics.close();
  }

  /** shutDown, then wait until every item handed out has been marked done. */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown();
    while (this.#processing.size > 0) {
      await new Promise<void>((resolve) => this.#drainWaiters.push(resolve));
    }
  }

  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Hook for subclasses holding timers. */
  protected onShutDown(): void {}
}
