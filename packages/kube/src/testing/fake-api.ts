import { ApiError } from "../rest/api-error.js";
import type {
  DeleteOptions,
  ListOptions,
  PatchOptions,
  PatchType,
  RestClient,
  WatchOptions,
  WriteOptions,
} from "../rest/client.js";
import { parseApiJson } from "../rest/decode.js";
import {
  type KubeList,
  type KubeObject,
  keyOf,
  type WatchEvent,
  type WatchEventType,
} from "../rest/object.js";
import { apiVersionOf, type ResourceDescriptor } from "../rest/resources.js";
import { formatTime } from "../util/meta-time.js";
import { matchesFieldSelector, matchesLabelSelector } from "./selectors.js";

/**
 * What a client gets back: the stored object as JSON, decoded as HttpRestClient decodes the apiserver's
 * answers (null fields read as absent). Tests may store objects with nulls, as the apiserver sends them.
 */
function onTheWire<T>(value: T): T {
  return parseApiJson(JSON.stringify(value)) as T;
}

export type FakeVerb = "get" | "list" | "create" | "update" | "patch" | "delete" | "watch";

interface LoggedEvent {
  rv: number;
  resource: string;
  type: WatchEventType;
  object: KubeObject;
}

interface Watcher {
  resource: string;
  opts: WatchOptions;
  push(event: WatchEvent<KubeObject>): void;
  end(err?: Error): void;
}

/** Options for how the fake reports a watch from a compacted resourceVersion. */
export interface FakeApiOptions {
  /** The real apiserver answers 200 then sends an ERROR event with code 410; set false for an HTTP 410. */
  goneAsWatchEvent?: boolean;
  /** Clock for creationTimestamp; Date.now by default. */
  now?: () => number;
}

/**
 * An in-memory apiserver behind the RestClient interface: objects with
 * resourceVersions, optimistic concurrency, selectors, pagination, watches
 * with bookmarks, compaction (410) and failure injection. For unit tests.
 */
export class FakeApi implements RestClient {
  readonly #objects = new Map<string, Map<string, KubeObject>>();
  readonly #log: LoggedEvent[] = [];
  readonly #watchers = new Set<Watcher>();
  readonly #failures: { verb: FakeVerb; err: Error }[] = [];
  readonly #options: FakeApiOptions;
  #rv = 100;
  #compactedRv = 0;
  #uid = 0;
  /** When true, watches stay open but deliver nothing, like a half-open TCP connection. */
  silent = false;
  /** Every call made, as "verb resource[/name]", for assertions. */
  readonly calls: string[] = [];
  /** The options of every watch opened, in order. */
  readonly watchRequests: WatchOptions[] = [];

  constructor(options: FakeApiOptions = {}) {
    this.#options = options;
  }

  /** The latest resourceVersion handed out. */
  get resourceVersion(): string {
    return String(this.#rv);
  }

  activeWatches(): number {
    return this.#watchers.size;
  }

  /** Makes the next call of `verb` fail with `err` (an HTTP code becomes an ApiError). */
  failNext(verb: FakeVerb, err: Error | number): void {
    const error = typeof err === "number" ? ApiError.fromStatus({ code: err }, `fake ${verb}`) : err;
    this.#failures.push({ verb, err: error });
  }

  /** Forgets history: watches from any older resourceVersion, and continue tokens of older lists, now get 410. */
  compact(): void {
    this.#compactedRv = this.#rv;
    this.#log.length = 0;
  }

  /** Ends every open watch cleanly, as a server-side timeout would. */
  closeWatches(): void {
    for (const w of [...this.#watchers]) w.end();
  }

  /** Ends every open watch with a transport error. */
  breakWatches(err = new Error("connection reset")): void {
    for (const w of [...this.#watchers]) w.end(err);
  }

  /** Sends a BOOKMARK at the current resourceVersion to every watch that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.#watchers) {
      if (w.opts.allowWatchBookmarks === false || this.silent) continue;
      w.push({ type: "BOOKMARK", object: { metadata: { resourceVersion: String(this.#rv) } } });
    }
  }

  /** Writes an object directly, as another client would; returns the stored copy. */
  seed<T extends KubeObject>(res: ResourceDescriptor<T>, obj: T): Promise<T> {
    return this.create(res, obj);
  }

  /** The stored object, or undefined. */
  peek<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    namespace: string | undefined,
    name: string,
  ): T | undefined {
    const obj = this.#bucket(res).get(keyOf(res.namespaced ? namespace : undefined, name));
    return obj ? (onTheWire(obj) as T) : undefined;
  }

  async get<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    name: string,
    opts: { namespace?: string } = {},
  ) {
    this.#call("get", res, name);
    const obj = this.#bucket(res).get(keyOf(res.namespaced ? opts.namespace : undefined, name));
    if (!obj) throw notFound(res, name);
    return onTheWire(obj) as T;
  }

  async list<T extends KubeObject>(res: ResourceDescriptor<T>, opts: ListOptions = {}): Promise<KubeList<T>> {
    this.#call("list", res);
    const all = [...this.#bucket(res).entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([, obj]) => obj)
      .filter((obj) => this.#matches(res, obj, opts));
    // A continue token names the first page's resourceVersion and where the next page starts; like the
    // apiserver's, it expires once compaction has passed that resourceVersion.
    const [tokenRv, offset] = (opts.continue ?? "").split(":").map(Number);
    if (opts.continue && (tokenRv ?? 0) < this.#compactedRv) throw continueExpired(res);
    const start = offset ?? 0;
    const end = opts.limit ? start + opts.limit : all.length;
    const page = all.slice(start, end);
    const rv = opts.continue ? String(tokenRv) : String(this.#rv);
    return {
      apiVersion: apiVersionOf(res),
      kind: `${res.kind}List`,
      metadata: { resourceVersion: rv, continue: end < all.length ? `${rv}:${end}` : undefined },
      items: onTheWire(page) as T[],
    };
  }

  async create<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    obj: T,
    opts: WriteOptions = {},
  ): Promise<T> {
    const namespace = res.namespaced ? (opts.namespace ?? obj.metadata?.namespace ?? "default") : undefined;
    const name =
      obj.metadata?.name ?? (obj.metadata?.generateName ? `${obj.metadata.generateName}${++this.#uid}` : "");
    this.#call("create", res, name);
    if (!name)
      throw ApiError.fromStatus({ code: 422, reason: "Invalid", message: "name is required" }, "create");
    if (obj.metadata?.resourceVersion) {
      throw ApiError.fromStatus(
        {
          code: 500,
          reason: "InternalError",
          message: "resourceVersion should not be set on objects to be created",
        },
        `create ${res.resource}`,
      );
    }
    const key = keyOf(namespace, name);
    if (this.#bucket(res).has(key)) {
      throw ApiError.fromStatus(
        { code: 409, reason: "AlreadyExists", message: `${res.resource} "${name}" already exists` },
        `create ${res.resource}`,
      );
    }
    const stored = this.#store(res, key, {
      ...structuredClone(obj),
      apiVersion: apiVersionOf(res),
      kind: res.kind,
      metadata: {
        ...structuredClone(obj.metadata ?? {}),
        name,
        namespace,
        uid: `uid-${++this.#uid}`,
        creationTimestamp: formatTime((this.#options.now ?? Date.now)()),
      },
    });
    this.#emit(res, "ADDED", stored);
    return onTheWire(stored) as T;
  }

  async update<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    obj: T,
    opts: WriteOptions = {},
  ): Promise<T> {
    const name = obj.metadata?.name ?? "";
    this.#call("update", res, name);
    const namespace = res.namespaced ? (opts.namespace ?? obj.metadata?.namespace) : undefined;
    const key = keyOf(namespace, name);
    const current = this.#bucket(res).get(key);
    if (!current) throw notFound(res, name);
    const wantRv = obj.metadata?.resourceVersion;
    if (wantRv && wantRv !== current.metadata?.resourceVersion) throw conflict(res, name);
    const stored = this.#store(res, key, {
      ...structuredClone(obj),
      apiVersion: apiVersionOf(res),
      kind: res.kind,
      metadata: { ...structuredClone(obj.metadata ?? {}), uid: current.metadata?.uid, namespace },
    });
    this.#emit(res, "MODIFIED", stored);
    return onTheWire(stored) as T;
  }

  async patch<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: PatchOptions = {},
  ): Promise<T> {
    this.#call("patch", res, name);
    if (type === "json-patch") {
      throw ApiError.fromStatus({ code: 415, reason: "UnsupportedMediaType" }, "fake patch: json-patch");
    }
    const namespace = res.namespaced ? opts.namespace : undefined;
    const key = keyOf(namespace, name);
    const current = this.#bucket(res).get(key);
    if (!current) {
      if (type === "apply") return this.create(res, patch as T, opts);
      throw notFound(res, name);
    }
    const merged = mergePatch(structuredClone(current), patch) as KubeObject;
    const wantRv = (patch as KubeObject).metadata?.resourceVersion;
    if (wantRv && wantRv !== current.metadata?.resourceVersion) throw conflict(res, name);
    const stored = this.#store(res, key, merged);
    this.#emit(res, "MODIFIED", stored);
    return onTheWire(stored) as T;
  }

  async delete(res: ResourceDescriptor, name: string, opts: DeleteOptions = {}): Promise<void> {
    this.#call("delete", res, name);
    const key = keyOf(res.namespaced ? opts.namespace : undefined, name);
    const current = this.#bucket(res).get(key);
    if (!current) throw notFound(res, name);
    if (opts.resourceVersion && opts.resourceVersion !== current.metadata?.resourceVersion) {
      throw conflict(res, name);
    }
    this.#bucket(res).delete(key);
    const gone = structuredClone(current);
    gone.metadata = { ...gone.metadata, resourceVersion: String(++this.#rv) };
    this.#emit(res, "DELETED", gone);
  }

  async *watch<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    this.#call("watch", res);
    this.watchRequests.push({ ...opts, signal: undefined });
    const resource = resourceId(res);
    const fromRv = Number(opts.resourceVersion ?? this.#rv);
    if (fromRv < this.#compactedRv) {
      const status = {
        kind: "Status",
        status: "Failure",
        code: 410,
        reason: "Expired",
        message: "too old resource version",
      };
      if (this.#options.goneAsWatchEvent === false)
        throw ApiError.fromStatus(status, `watch ${res.resource}`);
      yield { type: "ERROR", object: status as unknown as T };
      return;
    }
    const queue: WatchEvent<KubeObject>[] = [];
    let ended = false;
    let failure: Error | undefined;
    let wake: (() => void) | undefined;
    const watcher: Watcher = {
      resource,
      opts,
      push: (event) => {
        queue.push(onTheWire(event));
        wake?.();
      },
      end: (err) => {
        ended = true;
        failure = err;
        wake?.();
      },
    };
    for (const event of this.#log) {
      if (event.resource === resource && event.rv > fromRv && this.#matches(res, event.object, opts)) {
        watcher.push({ type: event.type, object: event.object });
      }
    }
    this.#watchers.add(watcher);
    const onAbort = () => watcher.end();
    opts.signal?.addEventListener("abort", onAbort, { once: true });
    try {
      for (;;) {
        const next = queue.shift();
        if (next) {
          yield next as WatchEvent<T>;
          continue;
        }
        if (ended) break;
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
      if (failure) throw failure;
    } finally {
      this.#watchers.delete(watcher);
      opts.signal?.removeEventListener("abort", onAbort);
    }
  }

  #call(verb: FakeVerb, res: ResourceDescriptor, name?: string): void {
    this.calls.push(`${verb} ${res.resource}${name ? `/${name}` : ""}`);
    const index = this.#failures.findIndex((f) => f.verb === verb);
    if (index >= 0) {
      const [failure] = this.#failures.splice(index, 1);
      if (failure) throw failure.err;
    }
  }

  #bucket(res: ResourceDescriptor): Map<string, KubeObject> {
    const id = resourceId(res);
    let bucket = this.#objects.get(id);
    if (!bucket) {
      bucket = new Map();
      this.#objects.set(id, bucket);
    }
    return bucket;
  }

  #store(res: ResourceDescriptor, key: string, obj: KubeObject): KubeObject {
    obj.metadata = { ...obj.metadata, resourceVersion: String(++this.#rv) };
    this.#bucket(res).set(key, obj);
    return obj;
  }

  #emit(res: ResourceDescriptor, type: WatchEventType, obj: KubeObject): void {
    const resource = resourceId(res);
    this.#log.push({ rv: this.#rv, resource, type, object: structuredClone(obj) });
    if (this.silent) return;
    for (const w of this.#watchers) {
      if (w.resource === resource && this.#matches(res, obj, w.opts)) w.push({ type, object: obj });
    }
  }

  #matches(
    res: ResourceDescriptor,
    obj: KubeObject,
    opts: { namespace?: string; labelSelector?: string; fieldSelector?: string },
  ): boolean {
    if (res.namespaced && opts.namespace && obj.metadata?.namespace !== opts.namespace) return false;
    return matchesLabelSelector(obj, opts.labelSelector) && matchesFieldSelector(obj, opts.fieldSelector);
  }
}

function resourceId(res: ResourceDescriptor): string {
  return `${res.group}/${res.resource}`;
}

function notFound(res: ResourceDescriptor, name: string): ApiError {
  return ApiError.fromStatus(
    { code: 404, reason: "NotFound", message: `${res.resource} "${name}" not found` },
    `fake ${res.resource}`,
  );
}

function conflict(res: ResourceDescriptor, name: string): ApiError {
  return ApiError.fromStatus(
    { code: 409, reason: "Conflict", message: `the object ${res.resource} "${name}" has been modified` },
    `fake ${res.resource}`,
  );
}

/** RFC 7386 JSON merge patch. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!patch || typeof patch !== "object" || Array.isArray(patch)) return patch;
  const result: Record<string, unknown> =
    target && typeof target === "object" && !Array.isArray(target)
      ? { ...(target as Record<string, unknown>) }
      : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = mergePatch(result[key], value);
  }
  return result;
}

function continueExpired(res: ResourceDescriptor): ApiError {
  return ApiError.fromStatus(
    { code: 410, reason: "Expired", message: "continue token too old: its resourceVersion was compacted" },
    `fake ${res.resource}`,
  );
}
