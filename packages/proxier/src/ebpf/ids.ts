// Numbers the maps use to refer to things: backend ids and reverse NAT indexes. A key keeps its number for as
// long as it is in use, so a sync rewrites only what changed. A number given up is not handed out again in the
// same sync: its entry is deleted at the end of that sync's steps, and until then a program may still read it
// under its old meaning. Numbers found in the kernel with unknown meaning (left by an earlier run) are avoided
// until the sync that deletes them is over.

export class IdAllocator {
  readonly #what: string;
  readonly #max: number;
  readonly #ids = new Map<string, number>();
  readonly #keys = new Map<number, string>();
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

  get(key: string): number | undefined {
    return this.#ids.get(key);
  }

  /** The key a number is given to. */
  keyOf(n: number): string | undefined {
    return this.#keys.get(n);
  }

  /** The key's number, giving it one if it has none. */
  ensure(key: string): number {
    const known = this.#ids.get(key);
    if (known !== undefined) return known;
    const n = this.#take();
    this.#ids.set(key, n);
    this.#keys.set(n, key);
    return n;
  }

  /** Gives up the key's number (reusable from the next sync on); its number, if it had one. */
  release(key: string): number | undefined {
    const n = this.#ids.get(key);
    if (n === undefined) return undefined;
    this.#ids.delete(key);
    this.#keys.delete(n);
    this.#released.push(n);
    return n;
  }

  /** Every key's number (a live view). */
  get ids(): ReadonlyMap<string, number> {
    return this.#ids;
  }

  get size(): number {
    return this.#ids.size;
  }

  #take(): number {
    const reused = this.#free.pop();
    if (reused !== undefined) return reused;
    while (this.#reserved.has(this.#next)) this.#next++;
    if (this.#next > this.#max) {
      throw new Error(`${this.#what} exhausted: all ${this.#max} are in use or awaiting deletion`);
    }
    return this.#next++;
  }
}
