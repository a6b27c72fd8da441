// Map entries of one batch, written back to back into zeroed chunks and handed out as views of them: a full
// sync at 10k Services writes some 330k entries, and a buffer allocated per key and value, filled from a record
// object, cost more than the rest of the sync. Two entries holding the same value may share its view.

/** The first chunk's size; each next one doubles, up to the largest, so a small sync allocates little. */
const FIRST_CHUNK = 1024;
const LARGEST_CHUNK = 1 << 20;

export class EntryBuffer {
  /** Where an entry's value starts, from where its key does. */
  readonly keySize: number;
  readonly #valueSize: number;
  #chunk = Buffer.alloc(0);
  #at = 0;
  #nextChunk = FIRST_CHUNK;
  readonly #entries: (readonly [key: Buffer, value: Buffer])[] = [];
  readonly #keys: Buffer[] = [];

  /** `valueSize` 0: keys only (a deletion). */
  constructor(keySize: number, valueSize = 0) {
    this.keySize = keySize;
    this.#valueSize = valueSize;
  }

  /**
   * Appends a zeroed entry: its key goes into `chunk` at the offset returned, its value `keySize` later, unless
   * it shares `value`, another entry's.
   */
  append(value?: Buffer): number {
    const size = this.keySize + (value ? 0 : this.#valueSize);
    if (this.#at + size > this.#chunk.length) {
      this.#chunk = Buffer.alloc(Math.max(this.#nextChunk, size));
      this.#nextChunk = Math.min(this.#nextChunk * 2, LARGEST_CHUNK);
      this.#at = 0;
    }
    const at = this.#at;
    this.#at += size;
    const key = this.#chunk.subarray(at, at + this.keySize);
    if (this.#valueSize === 0) this.#keys.push(key);
    else this.#entries.push([key, value ?? this.#chunk.subarray(at + this.keySize, at + size)]);
    return at;
  }

  /** Where the last appended entry is written. */
  get chunk(): Buffer {
    return this.#chunk;
  }

  /** The last appended entry's value. */
  get lastValue(): Buffer | undefined {
    return this.#entries.at(-1)?.[1];
  }

  entries(): readonly (readonly [key: Buffer, value: Buffer])[] {
    return this.#entries;
  }

  keys(): readonly Buffer[] {
    return this.#keys;
  }
}
