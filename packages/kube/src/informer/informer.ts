import { discardLogger, type Logger } from "../log/logger.js";
import type { KubeObject } from "../rest/object.js";
import { objectKey } from "../rest/object.js";
import { deepFreeze } from "./deep-freeze.js";
import type { Indexers } from "./indexers.js";
import { Reflector, type ReflectorOptions, type ReflectorSink } from "./reflector.js";
import { type Lister, Store } from "./store.js";

/**
 * Callbacks for cache changes. Objects are deep-frozen: copy before changing
 * (structuredClone). A handler that throws or rejects is logged with the
 * object's key, once per object and error, and not retried.
 */
export interface EventHandler<T extends KubeObject> {
  onAdd?(obj: T): unknown;
  onUpdate?(oldObj: T, newObj: T): unknown;
  /** After a relist, `obj` is the last state this informer saw, not the final state on the server. */
  onDelete?(obj: T): unknown;
}

export interface InformerOptions<T extends KubeObject> extends ReflectorOptions<T> {
  indexers?: Indexers<T>;
  /**
   * Applied to every listed or watched object before it is stored, e.g. to drop managedFields or fields
   * the program never reads, so a large cache costs less memory and handlers see less. It must keep the
   * object's namespace, name and resourceVersion.
   */
  transform?: (obj: T) => T;
}

/**
 * A shared informer: a reflector feeding a frozen, indexed store, with event
 * handlers and a sync signal. Start it once; it runs until stopped.
 */
export class Informer<T extends KubeObject> implements Lister<T> {
  readonly resource: InformerOptions<T>["resource"];
  readonly #store: Store<T>;
  readonly #reflector: Reflector<T>;
  readonly #log: Logger;
  readonly #handlers = new Set<EventHandler<T>>();
  readonly #syncWaiters = new Set<() => void>();
  readonly #transform: (obj: T) => T;
  /** The last error logged per object key, so that a relist does not log the same failure again. */
  readonly #reported = new Map<string, string>();
  #synced = false;
  #abort: AbortController | undefined;
  #running: Promise<void> | undefined;

  constructor(options: InformerOptions<T>) {
    this.resource = options.resource;
    this.#store = new Store<T>(options.indexers);
    this.#transform = options.transform ?? ((obj) => obj);
    this.#log = (options.logger ?? discardLogger).child({ informer: options.resource.resource });
    const sink: ReflectorSink<T> = {
      replace: (items) => this.#replace(items),
      apply: (type, obj) => this.#apply(type, obj),
    };
    this.#reflector = new Reflector(options, sink);
  }

  /**
   * Registers handlers. Objects already cached are delivered as adds first, so
   * a late subscriber sees the same world as an early one. Returns an unsubscribe.
   */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.#handlers.add(handler);
    for (const obj of this.#store.list()) this.#call("onAdd", obj, () => handler.onAdd?.(obj));
    return () => {
      this.#handlers.delete(handler);
    };
  }

  addIndexers(indexers: Indexers<T>): void {
    this.#store.addIndexers(indexers);
  }

  /** Starts list/watch in the background; a second call is a no-op. */
  start(signal?: AbortSignal): void {
    if (this.#running) return;
    const abort = new AbortController();
    this.#abort = abort;
    signal?.addEventListener("abort", () => abort.abort(), { once: true });
    this.#running = this.#reflector.run(abort.signal);
  }

  /** Stops the informer and waits for its loop to end. */
  async stop(): Promise<void> {
    this.#abort?.abort();
    await this.#running;
    for (const wake of this.#syncWaiters) wake();
  }

  isRunning(): boolean {
    return this.#running !== undefined && this.#abort?.signal.aborted === false;
  }

  /** True once the first list has been stored. */
  hasSynced(): boolean {
    return this.#synced;
  }

  /** Resolves true once synced, or false if `signal` aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.#synced) return Promise.resolve(true);
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = () => {
        this.#syncWaiters.delete(done);
        signal?.removeEventListener("abort", done);
        resolve(this.#synced);
      };
      this.#syncWaiters.add(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  lastSyncResourceVersion(): string | undefined {
    return this.#reflector.lastSyncResourceVersion();
  }

  /** Why the cache has not synced yet (the last list/watch error, or that the first list is pending). */
  notSyncedReason(): string | undefined {
    if (this.#synced) return undefined;
    return this.#reflector.lastError() ?? "waiting for the first list";
  }

  get(namespace: string | undefined, name: string): T | undefined {
    return this.#store.get(namespace, name);
  }
  getByKey(key: string): T | undefined {
    return this.#store.getByKey(key);
  }
  list(namespace?: string): T[] {
    return this.#store.list(namespace);
  }
  byIndex(indexName: string, value: string): T[] {
    return this.#store.byIndex(indexName, value);
  }
  keys(): string[] {
    return this.#store.keys();
  }

  #replace(items: T[]): void {
    const admitted: T[] = [];
    for (const item of items) {
      const obj = this.#admit(item);
      // An object the transform throws on keeps the version cached before, if any.
      const kept = obj ?? this.#store.getByKey(objectKey(item));
      if (kept) admitted.push(kept);
    }
    const { added, updated, deleted, rejected } = this.#store.replace(admitted);
    for (const { obj, error } of rejected) this.#report(obj, "indexing", error);
    for (const obj of deleted) this.#emit("onDelete", obj, (h) => h.onDelete?.(obj));
    for (const { oldObj, newObj } of updated)
      this.#emit("onUpdate", newObj, (h) => h.onUpdate?.(oldObj, newObj));
    for (const obj of added) this.#emit("onAdd", obj, (h) => h.onAdd?.(obj));
    if (!this.#synced) {
      this.#synced = true;
      for (const wake of this.#syncWaiters) wake();
    }
  }

  #apply(type: "ADDED" | "MODIFIED" | "DELETED", received: T): void {
    if (type === "DELETED") {
      const key = objectKey(received);
      this.#reported.delete(key);
      const old = this.#store.remove(key);
      if (!old) return;
      // The watch's copy is the final state; it is ours alone, so freeze it in place.
      const gone = deepFreeze(this.#admit(received) ?? old);
      this.#emit("onDelete", gone, (h) => h.onDelete?.(gone));
      return;
    }
    const obj = this.#admit(received);
    if (!obj) return;
    const current = this.#store.getByKey(objectKey(obj));
    // A replayed event for a version we already hold is not a change.
    if (current && current.metadata?.resourceVersion === obj.metadata?.resourceVersion) return;
    let old: T | undefined;
    try {
      old = this.#store.upsert(obj);
    } catch (error) {
      this.#report(obj, "indexing", error);
      return;
    }
    const stored = this.#store.getByKey(objectKey(obj)) as T;
    if (old) this.#emit("onUpdate", stored, (h) => h.onUpdate?.(old, stored));
    else this.#emit("onAdd", stored, (h) => h.onAdd?.(stored));
  }

  /** The object as the cache keeps it, or undefined when the transform throws on it (reported). */
  #admit(received: T): T | undefined {
    try {
      const obj = this.#transform(received);
      this.#reported.delete(objectKey(received));
      return obj;
    } catch (error) {
      this.#report(received, "transform", error);
      return undefined;
    }
  }

  /**
   * One object that cannot be taken must not stop the informer: it is skipped (or, for a handler, that
   * handler's call is), and the failure is logged once per object and message.
   */
  #report(obj: T, stage: string, error: unknown): void {
    const key = objectKey(obj);
    const message = `${stage}: ${error instanceof Error ? error.message : String(error)}`;
    if (this.#reported.get(key) === message) return;
    this.#reported.set(key, message);
    this.#log.error("skipping an object that failed", {
      object: key,
      resourceVersion: obj.metadata?.resourceVersion,
      stage,
      error,
    });
  }

  #emit(kind: keyof EventHandler<T>, obj: T, invoke: (h: EventHandler<T>) => unknown): void {
    for (const handler of this.#handlers) this.#call(kind, obj, () => invoke(handler));
  }

  #call(kind: keyof EventHandler<T>, obj: T, invoke: () => unknown): void {
    try {
      const result = invoke();
      if (result instanceof Promise) result.catch((err: unknown) => this.#report(obj, kind, err));
    } catch (err) {
      this.#report(obj, kind, err);
    }
  }
}
