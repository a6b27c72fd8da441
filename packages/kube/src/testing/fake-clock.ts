import type { Clock, TimerHandle } from "../util/clock.js";

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Lets every pending promise callback and I/O callback run. */
export async function flushAsync(rounds = 5): Promise<void> {
  for (let i = 0; i < rounds; i++) await new Promise((resolve) => setImmediate(resolve));
}

/**
 * A manual clock: time moves only through `advance`, which fires due timers in
 * order and lets async work settle between them, so code built on injected
 * timers behaves as it would in real time, minus the waiting.
 */
export class FakeClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Map<number, PendingTimer>();

  constructor(startMs = Date.UTC(2024, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = ++this.#seq;
    this.#timers.set(id, { at: this.#now + Math.max(0, ms), seq: id, fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers.delete(handle as number);
  }

  /** Number of timers not yet fired or cleared. */
  pendingTimers(): number {
    return this.#timers.size;
  }

  /** Delays (from now) of the pending timers, soonest first. */
  pendingDelays(): number[] {
    return [...this.#timers.values()].map((t) => t.at - this.#now).sort((a, b) => a - b);
  }

  /** Moves time forward by `ms`, firing each timer that falls due, in order. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await flushAsync();
    for (;;) {
      const next = this.#earliest();
      if (!next || next.at > target) break;
      this.#timers.delete(next.seq);
      this.#now = Math.max(this.#now, next.at);
      next.fn();
      await flushAsync();
    }
    this.#now = target;
    await flushAsync();
  }

  #earliest(): PendingTimer | undefined {
    let best: PendingTimer | undefined;
    for (const t of this.#timers.values()) {
      if (!best || t.at < best.at || (t.at === best.at && t.seq < best.seq)) best = t;
    }
    return best;
  }
}
