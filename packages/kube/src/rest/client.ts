import { isResourceExpired } from "./api-error.js";
import type { KubeList, KubeObject, WatchEvent } from "./object.js";
import type { ResourceDescriptor } from "./resources.js";

export type PatchType = "merge" | "strategic-merge" | "json-patch" | "apply";

export const patchContentTypes: Record<PatchType, string> = {
  merge: "application/merge-patch+json",
  "strategic-merge": "application/strategic-merge-patch+json",
  "json-patch": "application/json-patch+json",
  apply: "application/apply-patch+yaml",
};

export interface ListOptions {
  /** Omit for all namespaces (namespaced kinds) or for cluster-scoped kinds. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size; the server returns `metadata.continue` when more remain. */
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "Exact" | "NotOlderThan";
  signal?: AbortSignal;
}

export interface WatchOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  /** Server-side watch timeout; the server closes the stream cleanly after it. */
  timeoutSeconds?: number;
  /** Defaults to true. */
  allowWatchBookmarks?: boolean;
  /** Aborting ends the iteration without an error. */
  signal?: AbortSignal;
}

export interface WriteOptions {
  namespace?: string;
  fieldManager?: string;
  dryRun?: boolean;
  signal?: AbortSignal;
}

export interface PatchOptions extends WriteOptions {
  /** Server-side apply only: take ownership of conflicting fields. */
  force?: boolean;
}

export interface DeleteOptions {
  namespace?: string;
  gracePeriodSeconds?: number;
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  /** Precondition: only delete this exact version. */
  resourceVersion?: string;
  uid?: string;
  signal?: AbortSignal;
}

/**
 * The raw-JSON REST surface the runtime needs. HttpRestClient talks to a real
 * apiserver; FakeApi (./testing) implements the same interface in memory.
 * Failures reject with ApiError.
 */
export interface RestClient {
  get<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    name: string,
    opts?: { namespace?: string; signal?: AbortSignal },
  ): Promise<T>;
  list<T extends KubeObject>(res: ResourceDescriptor<T>, opts?: ListOptions): Promise<KubeList<T>>;
  create<T extends KubeObject>(res: ResourceDescriptor<T>, obj: T, opts?: WriteOptions): Promise<T>;
  /** PUT; the object's metadata.resourceVersion makes it a compare-and-swap. */
  update<T extends KubeObject>(res: ResourceDescriptor<T>, obj: T, opts?: WriteOptions): Promise<T>;
  patch<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    name: string,
    type: PatchType,
    patch: unknown,
    opts?: PatchOptions,
  ): Promise<T>;
  delete(res: ResourceDescriptor, name: string, opts?: DeleteOptions): Promise<void>;
  /**
   * A watch stream. Iteration ends when the server closes the stream or the
   * signal aborts; transport failures and non-2xx responses throw ApiError or
   * the network error. ERROR events are yielded as-is, for the caller to judge.
   */
  watch<T extends KubeObject>(res: ResourceDescriptor<T>, opts?: WatchOptions): AsyncIterable<WatchEvent<T>>;
}

/**
 * Every page of a list, following `continue` tokens, as client-go's pager does it. A page whose continue token has
 * expired (410 with reason Expired: etcd compacted the first page's revision away while the pages were read) is
 * not an error: the pages read so far are dropped and the list is made again in one request, without a limit, at
 * the resourceVersion first asked for.
 */
export async function listAll<T extends KubeObject>(
  client: RestClient,
  res: ResourceDescriptor<T>,
  opts: ListOptions = {},
): Promise<KubeList<T>> {
  let first: KubeList<T> | undefined;
  let page: ListOptions = opts;
  const items: T[] = [];
  for (;;) {
    let last: KubeList<T>;
    try {
      last = await client.list(res, page);
    } catch (err) {
      if (!page.continue || !isResourceExpired(err)) throw err;
      return client.list(res, { ...opts, limit: undefined, continue: undefined });
    }
    first ??= last;
    items.push(...last.items);
    const next = last.metadata.continue;
    if (!next) {
      // Every page of a paginated list is served from the first page's snapshot.
      return {
        ...first,
        metadata: { ...last.metadata, resourceVersion: first.metadata.resourceVersion },
        items,
      };
    }
    // The apiserver refuses a resourceVersion (or a match rule) next to a continue token, which carries its own.
    page = { ...opts, continue: next, resourceVersion: undefined, resourceVersionMatch: undefined };
  }
}
