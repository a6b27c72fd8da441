// An immutable map whose next version shares everything but its edits with this one. The change trackers hand each
// sync a complete map of every Service port while earlier results stay valid (the last programmed state is judged
// against the new one); copying 10k entries per tracker was most of a one-endpoint partial sync.

const GONE: unique symbol = Symbol("gone");

/**
 * Above this many edits on a base of `baseSize` entries, the next version is flattened into a plain Map: each
 * version copies its edits, so they are kept a small share of the base (amortized, a few entries per edit).
 */
const flattenAbove = (baseSize: number): number => 256 + (baseSize >> 4);

export class SnapshotMap<K, V> implements ReadonlyMap<K, V> {
  /** Never changed once built. */
  readonly #base: ReadonlyMap<K, V>;
  /** Keys set or deleted since #base, in the order they were last set (deleted keys hold GONE). */
  readonly #edits: ReadonlyMap<K, V | typeof GONE>;
  readonly size: number;

  private constructor(base: ReadonlyMap<K, V>, edits: ReadonlyMap<K, V | typeof GONE>, size: number) {
    this.#base = base;
    this.#edits = edits;
    this.size = size;
  }

  static empty<K, V>(): SnapshotMap<K, V> {
    return new SnapshotMap<K, V>(new Map(), new Map(), 0);
  }

  /**
   * The next version: each edit, in order, deletes its key (value undefined) or deletes it and sets it again (so
   * the key iterates last, as Map.delete then Map.set leaves it). This version is unchanged.
   */
  with(edits: Iterable<readonly [K, V | undefined]>): SnapshotMap<K, V> {
    const next = new Map(this.#edits);
    let size = this.size;
    for (const [key, value] of edits) {
      const had = next.has(key) ? next.get(key) !== GONE : this.#base.has(key);
      next.delete(key);
      if (value === undefined) {
        if (this.#base.has(key)) next.set(key, GONE);
        if (had) size--;
      } else {
        next.set(key, value);
        if (!had) size++;
      }
    }
    if (next.size <= flattenAbove(this.#base.size)) return new SnapshotMap(this.#base, next, size);
    const flat = new Map(new SnapshotMap(this.#base, next, size));
    return new SnapshotMap(flat, new Map(), flat.size);
  }

  get(key: K): V | undefined {
    if (!this.#edits.has(key)) return this.#base.get(key);
    const value = this.#edits.get(key);
    return value === GONE ? undefined : value;
  }

  has(key: K): boolean {
    return this.#edits.has(key) ? this.#edits.get(key) !== GONE : this.#base.has(key);
  }

  *entries(): MapIterator<[K, V]> {
    const edits = this.#edits;
    if (edits.size === 0) {
      yield* this.#base.entries();
      return;
    }
    for (const entry of this.#base) if (!edits.has(entry[0])) yield entry;
    for (const [key, value] of edits) if (value !== GONE) yield [key, value];
  }

  *keys(): MapIterator<K> {
    for (const [key] of this.entries()) yield key;
  }

  *values(): MapIterator<V> {
    for (const [, value] of this.entries()) yield value;
  }

  forEach(fn: (value: V, key: K, map: ReadonlyMap<K, V>) => void, thisArg?: unknown): void {
    for (const [key, value] of this.entries()) fn.call(thisArg, value, key, this);
  }

  [Symbol.iterator](): MapIterator<[K, V]> {
    return this.entries();
  }
}
