import type { Entry } from "./entry.js";

/**
 * CoreDNS splits each cache into 256 shards of max(capacity/256, 4) entries, so the real capacity is a
 * multiple of 256 and never below 1024 (10000 gives the documented 9984).
 */
export function effectiveCapacity(capacity: number): number {
  return 256 * Math.max(Math.floor(capacity / 256), 4);
}

/**
 * A bounded map of entries. When full, adding a new key evicts the oldest stored entry (CoreDNS evicts
 * a random one of its shard; both keep the size bounded, this one is deterministic for tests).
 */
export class EntryStore {
  private readonly entries = new Map<string, Entry>();
  readonly capacity: number;

  constructor(capacity: number) {
    this.capacity = effectiveCapacity(capacity);
  }

  get size(): number {
    return this.entries.size;
  }

  get(key: string): Entry | undefined {
    return this.entries.get(key);
  }

  /** Stores `entry`; true when another entry had to be evicted to make room. */
  add(key: string, entry: Entry): boolean {
    let evicted = false;
    if (this.entries.has(key)) this.entries.delete(key);
    else if (this.entries.size >= this.capacity) {
      const oldest = this.entries.keys().next();
      if (!oldest.done) this.entries.delete(oldest.value);
      evicted = true;
    }
    this.entries.set(key, entry);
    return evicted;
  }

  remove(key: string): void {
    this.entries.delete(key);
  }
}
