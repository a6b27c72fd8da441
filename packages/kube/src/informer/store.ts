import { type KubeObject, keyOf, objectKey } from "../rest/object.js";
import { deepFreeze } from "./deep-freeze.js";
import { byNamespace, type Indexers, indexNames } from "./indexers.js";

/** Read access to an informer's cache. Every object returned is deep-frozen. */
export interface Lister<T extends KubeObject> {
  get(namespace: string | undefined, name: string): T | undefined;
  getByKey(key: string): T | undefined;
  /** All objects, or those in one namespace. */
  list(namespace?: string): T[];
  /** Objects whose index function returned `value` for the index `indexName`. */
  byIndex(indexName: string, value: string): T[];
  keys(): string[];
}

export interface ReplaceResult<T> {
  added: T[];
  updated: { oldObj: T; newObj: T }[];
  deleted: T[];
  /** Objects an index function threw on; the version stored before, if any, is kept. */
  rejected: { obj: T; error: unknown }[];
}

/**
 * The cache behind an informer, keyed by
 * "namespace/name", with secondary indexes. Objects are frozen on the way in.
 */
export class Store<T extends KubeObject> implements Lister<T> {
  readonly #items = new Map<string, T>();
  readonly #indexers = new Map<string, (obj: T) => string[]>();
  readonly #indices = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Indexers<T> = {}) {
    this.addIndexers({ [indexNames.namespace]: byNamespace, ...indexers });
  }

  /** Adds indexes; existing objects are indexed at once. An existing name is kept. */
  addIndexers(indexers: Indexers<T>): void {
    for (const [name, fn] of Object.entries(indexers)) {
      if (this.#indexers.has(name)) continue;
      this.#indexers.set(name, fn);
      this.#indices.set(name, new Map());
      for (const [key, obj] of this.#items) {
        try {
          this.#index(name, fn, key, obj);
        } catch {
          // The object stays findable by key and in the other indexes; upsert reports such a throw.
        }
      }
    }
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.#items.get(keyOf(namespace, name));
  }

  getByKey(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(namespace?: string): T[] {
    if (namespace === undefined) return [...this.#items.values()];
    return this.byIndex(indexNames.namespace, namespace);
  }

  byIndex(indexName: string, value: string): T[] {
    const index = this.#indices.get(indexName);
    if (!index) throw new Error(`store has no index named "${indexName}"`);
    const keys = index.get(value) ?? new Set<string>();
    return [...keys].map((k) => this.#items.get(k)).filter((o): o is T => o !== undefined);
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  get size(): number {
    return this.#items.size;
  }

  /**
   * Stores `obj` (frozen) and returns what it replaced. The index values are worked out first, so an
   * index function that throws leaves the store as it was.
   */
  upsert(obj: T): T | undefined {
    const key = objectKey(obj);
    const frozen = deepFreeze(obj);
    const values = [...this.#indexers].map(([name, fn]) => [name, fn(frozen)] as const);
    const previous = this.#items.get(key);
    if (previous) this.#unindex(key, previous);
    this.#items.set(key, frozen);
    for (const [name, indexed] of values) this.#addToIndex(name, indexed, key);
    return previous;
  }

  /** Removes by key and returns the removed object. */
  remove(key: string): T | undefined {
    const previous = this.#items.get(key);
    if (!previous) return undefined;
    this.#unindex(key, previous);
    this.#items.delete(key);
    return previous;
  }

  /**
   * Makes the store hold exactly `objects`. Reports what changed; an object
   * counts as updated only when its resourceVersion differs.
   */
  replace(objects: readonly T[]): ReplaceResult<T> {
    const result: ReplaceResult<T> = { added: [], updated: [], deleted: [], rejected: [] };
    const seen = new Set<string>();
    for (const obj of objects) {
      const key = objectKey(obj);
      seen.add(key);
      const old = this.#items.get(key);
      if (old && old.metadata?.resourceVersion === obj.metadata?.resourceVersion) continue;
      let stored: T | undefined;
      try {
        stored = this.upsert(obj);
      } catch (error) {
        result.rejected.push({ obj, error });
        continue;
      }
      const frozen = this.#items.get(key) as T;
      if (stored) result.updated.push({ oldObj: stored, newObj: frozen });
      else result.added.push(frozen);
    }
    for (const key of [...this.#items.keys()]) {
      if (seen.has(key)) continue;
      const gone = this.remove(key);
      if (gone) result.deleted.push(gone);
    }
    return result;
  }

  #index(name: string, fn: (obj: T) => string[], key: string, obj: T): void {
    this.#addToIndex(name, fn(obj), key);
  }

  #addToIndex(name: string, values: readonly string[], key: string): void {
    const index = this.#indices.get(name);
    if (!index) return;
    for (const value of values) {
      let keys = index.get(value);
      if (!keys) {
        keys = new Set();
        index.set(value, keys);
      }
      keys.add(key);
    }
  }

  #unindex(key: string, obj: T): void {
    for (const [name, fn] of this.#indexers) {
      const index = this.#indices.get(name);
      for (const value of fn(obj)) {
        const keys = index?.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index?.delete(value);
      }
    }
  }
}
