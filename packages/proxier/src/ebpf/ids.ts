// Numbers the maps use to refer to things: backend ids and reverse NAT indexes. A key keeps its number for as
// long as it is in use, so a sync rewrites only what changed (the number sits on the key's entry: backends.ts,
// rev-nat.ts), and across a restart too: the numbers live in the kernel at start-up are taken over as in use
// (inUse), kept by the keys they still stand for, and released by the sync that deletes the rest. A number
// given up is not handed out again in the same sync: its entry is deleted at the end of that sync's steps, and
// until then a program may still read it under its old meaning.

/** Which numbers are free, and which were given up in this sync. */
export class NumberPool {
  readonly #what: string;
  readonly #max: number;
  #next = 1;
  /** Free numbers, largest first (the smallest is reused first). */
  #free: number[] = [];
  /** Given up in the current sync: free once its deletions have run. */
  #released: number[] = [];

  /** `what` names the numbers in errors ("backend ids"); they run from 1 to `max`. */
  constructor(what: string, max: number) {
    this.#what = what;
    this.#max = max;
  }

  /** Starts a sync: what the previous sync gave up (and deleted) may be reused now. */
  startSync(): void {
    if (this.#released.length > 0) this.#free = [...this.#free, ...this.#released].sort((a, b) => b - a);
    this.#released = [];
  }

  /** Numbers an earlier run left in the kernel: in use until released, the ones between them free. */
  inUse(numbers: Iterable<number>): void {
    const used = new Set(numbers);
    let max = this.#next - 1;
    for (const n of used) if (n > max) max = n;
    this.#free = this.#free.filter((n) => !used.has(n));
    for (let n = this.#next; n <= max; n++) if (!used.has(n)) this.#free.push(n);
    this.#free.sort((a, b) => b - a);
    this.#next = max + 1;
  }

  take(): number {
    const reused = this.#free.pop();
    if (reused !== undefined) return reused;
    if (this.#next > this.#max) {
      throw new Error(`${this.#what} exhausted: all ${this.#max} are in use or awaiting deletion`);
    }
    return this.#next++;
  }

  /** Gives up a number taken: reusable from the next sync on. */
  release(n: number): void {
    this.#released.push(n);
  }
}
