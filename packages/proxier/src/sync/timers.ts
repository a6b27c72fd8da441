// Time as the sync loop sees it, injected so tests can step it by hand.

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export interface TimerHandle {
  cancel(): void;
}

export interface Timers {
  /** Calls fn once after ms milliseconds unless cancelled first. */
  after(ms: number, fn: () => void): TimerHandle;
}

export const systemClock: Clock = { now: () => Date.now() };

/** Real timers; setTimeout is looked up per call so test spies installed later still apply. */
export const systemTimers: Timers = {
  after(ms, fn) {
    const t = setTimeout(fn, ms);
    // A pending resync must not keep a process alive that has nothing else to do.
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

/** A manual clock and timer queue: advance(ms) fires what falls due, in order. */
export class FakeTime implements Clock, Timers {
  #now: number;
  #seq = 0;
  readonly #pending = new Map<number, { at: number; fn: () => void }>();

  constructor(start = 0) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): TimerHandle {
    const id = this.#seq++;
    this.#pending.set(id, { at: this.#now + Math.max(0, ms), fn });
    return { cancel: () => this.#pending.delete(id) };
  }

  /** Number of armed timers. */
  get pending(): number {
    return this.#pending.size;
  }

  /**
   * Moves time forward, firing due timers in time order (then creation order). Microtasks
   * run between timers, so async work a timer starts can settle before the next one fires.
   */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    for (;;) {
      await settle();
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const entry of this.#pending)
        if (entry[1].at <= end && (!next || entry[1].at < next[1].at)) next = entry;
      if (!next) break;
      this.#pending.delete(next[0]);
      this.#now = next[1].at;
      next[1].fn();
    }
    this.#now = end;
    await settle();
  }
}

/** Lets queued promise callbacks run (a few rounds, for chains of awaits). */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}
