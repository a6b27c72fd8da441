// Map entries of one batch, written field by field into two growing buffers, keys back to back in one and
// values in the other: the layout the kernel's batch operations read, so the whole batch reaches the kernel
// without a copy per entry. A full sync at 10k Services writes some 220k entries; a Buffer view per key and
// value (two objects each) was a fifth of the sync's heap and much of its garbage-collection time.

/** Entries room is made for at first; the buffers double when full. */
const FIRST_ROOM = 256;

export class EntryBuffer {
  readonly keySize: number;
  readonly valueSize: number;
  #keys: Buffer = Buffer.alloc(0);
  #values: Buffer = Buffer.alloc(0);
  #count = 0;

  /** `valueSize` 0: keys only (a deletion). */
  constructor(keySize: number, valueSize = 0) {
    this.keySize = keySize;
    this.valueSize = valueSize;
  }

  /** Appends a zeroed entry; its key goes into `keys` at keyAt(index), its value into `values` at valueAt. */
  append(): number {
    if (this.#count * this.keySize >= this.#keys.length) this.#grow();
    return this.#count++;
  }

  keyAt(index: number): number {
    return index * this.keySize;
  }

  valueAt(index: number): number {
    return index * this.valueSize;
  }

  /** Where keys are written (read it after append: growing replaces it). */
  get keys(): Buffer {
    return this.#keys;
  }

  get values(): Buffer {
    return this.#values;
  }

  get count(): number {
    return this.#count;
  }

  /** The batch as written: `count` keys and values, back to back. */
  batch(): EntryBatch {
    return {
      count: this.#count,
      keys: this.#keys.subarray(0, this.#count * this.keySize),
      values: this.#values.subarray(0, this.#count * this.valueSize),
      keySize: this.keySize,
      valueSize: this.valueSize,
    };
  }

  #grow(): void {
    const room = Math.max(FIRST_ROOM, this.#count * 2);
    this.#keys = grown(this.#keys, room * this.keySize);
    this.#values = grown(this.#values, room * this.valueSize);
  }
}

/** Entries packed as the kernel's batch operations take them. */
export interface EntryBatch {
  readonly count: number;
  /** `count` keys of `keySize` bytes, back to back. */
  readonly keys: Buffer;
  /** `count` values of `valueSize` bytes (empty for a deletion). */
  readonly values: Buffer;
  readonly keySize: number;
  readonly valueSize: number;
}

function grown(from: Buffer, size: number): Buffer {
  const to = Buffer.alloc(size);
  from.copy(to);
  return to;
}

/** The batch's keys, one view each (for readers that go entry by entry: the fake, tests). */
export function batchKeys(b: EntryBatch): Buffer[] {
  return Array.from({ length: b.count }, (_, i) => b.keys.subarray(i * b.keySize, (i + 1) * b.keySize));
}

/** The batch's entries, one pair of views each. */
export function batchEntries(b: EntryBatch): (readonly [key: Buffer, value: Buffer])[] {
  const keys = batchKeys(b);
  return keys.map((k, i) => [k, b.values.subarray(i * b.valueSize, (i + 1) * b.valueSize)] as const);
}
