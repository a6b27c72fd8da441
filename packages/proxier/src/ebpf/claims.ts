// Keys that several Service ports may ask for (a frontend two Services list, a backend two Services share),
// each port with its own value. The port first in key order decides the value, whatever order the ports were
// rendered in, so a partial sync ends where a full one would. A port claiming again what it claimed, with an
// equal value, changes nothing; keys whose claims did change are handed to the sync to write.
//
// Each key has one entry, which its owner may extend with what it keeps about the key (a backend's id and
// value): a sync then finds everything about a key with one lookup. An entry outlives its last claim until its
// owner forgets it, having let go of what it attached.
import { compareStrings } from "../model/endpoint.js";

/** One port's claim. A key's claims are chained from its first: most keys have one, and an array each costs. */
export interface Claim<V> {
  readonly port: string;
  value: V;
  next: Claim<V> | undefined;
}

export interface ClaimEntry<V> {
  readonly key: string;
  /** undefined: no port claims the key any more. */
  first: Claim<V> | undefined;
  /** Listed for the sync to write. */
  dirty: boolean;
}

export class Claims<V, E extends ClaimEntry<V> = ClaimEntry<V>> {
  readonly #entries = new Map<string, E>();
  readonly #same: (a: V, b: V) => boolean;
  readonly #newEntry: (key: string) => E;
  #dirty: E[] = [];

  /**
   * `same` tells two values of one key apart: a claim whose value stays the same is no change. The newer value
   * is kept all the same: it goes with the rest of the port's newest render (the positions its scopes count
   * backends by).
   */
  constructor(same: (a: V, b: V) => boolean, newEntry: (key: string) => E) {
    this.#same = same;
    this.#newEntry = newEntry;
  }

  /** Sets the port's claim on the key; the key's entry. */
  claim(key: string, port: string, value: V): E {
    let entry = this.#entries.get(key);
    if (!entry) {
      entry = this.#newEntry(key);
      this.#entries.set(key, entry);
    }
    for (let c = entry.first; c; c = c.next) {
      if (c.port !== port) continue;
      if (!this.#same(c.value, value)) this.#changed(entry);
      c.value = value;
      return entry;
    }
    entry.first = { port, value, next: entry.first };
    this.#changed(entry);
    return entry;
  }

  release(key: string, port: string): void {
    const entry = this.#entries.get(key);
    let before: Claim<V> | undefined;
    for (let c = entry?.first; entry && c; before = c, c = c.next) {
      if (c.port !== port) continue;
      if (before) before.next = c.next;
      else entry.first = c.next;
      this.#changed(entry);
      return;
    }
  }

  /** The claim of the first claiming port in key order; undefined when nobody claims the key. */
  winner(entry: E): Claim<V> | undefined {
    let best = entry.first;
    for (let c = best?.next; c; c = c.next) if (best && compareStrings(c.port, best.port) < 0) best = c;
    return best;
  }

  /** Entries whose claims changed since the last call, in the order they first changed. */
  takeDirty(): E[] {
    const dirty = this.#dirty;
    this.#dirty = [];
    for (const entry of dirty) entry.dirty = false;
    return dirty;
  }

  /** Drops the entry if no port claims its key any more (a claim since makes a new one). */
  forget(entry: E): void {
    if (entry.first === undefined && this.#entries.get(entry.key) === entry) this.#entries.delete(entry.key);
  }

  entries(): IterableIterator<E> {
    return this.#entries.values();
  }

  #changed(entry: E): void {
    if (entry.dirty) return;
    entry.dirty = true;
    this.#dirty.push(entry);
  }
}
