// Numbers the maps use to refer to things: backend ids and reverse NAT indexes. A key keeps its number for as
// long as it is in use, so a sync rewrites only what changed (the number sits on the key's entry: backends.ts,
// rev-nat.ts). A number given up is not handed out again in the
// same sync: its entry is deleted at the end of that sync's steps, and until then a program may still read it
// under its old meaning. Numbers found in the kernel with unknown meaning (left by an earlier run) are avoided
// until the sync that deletes them is over.

/** Which numbers are free, given up in this sync, or reserved. */
export class NumberPool {
  readonly #what: string;
  readonly #max: number;
  #next = 1;
  /** Free numbers, largest first (the smallest is reused first). */
  #free: number[] = [];
  /** Given up in the current sync: free once its deletions have run. */
  #released: number[] = [];
  /** Live in the kernel with unknown meaning; the current sync deletes them. */
  #reserved = new Set<number>();

  /** `what` names the numbers in errors ("backend ids"); they run from 1 to `max`. */
  constructor(what: string, max: number) {
    this.#what = what;
    this.#max = max;
  }

  /** Starts a sync: what the previous sync gave up (and deleted) may be reused now. */
  startSync(): void {
    const freed = [...this.#released, ...[...this.#reserved].filter((n) => n < this.#next)];
    if (freed.length > 0) this.#free = [...this.#free, ...freed].sort((a, b) => b - a);
    this.#released = [];
    this.#reserved = new Set();
  }

  /** Numbers live in the kernel whose meaning is unknown: not handed out in this sync. */
  reserve(numbers: Iterable<number>): void {
    for (const n of numbers) this.#reserved.add(n);
  }

  take(): number {
    const reused = this.#free.pop();
    if (reused !== undefined) return reused;
    while (this.#reserved.has(this.#next)) this.#next++;
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
