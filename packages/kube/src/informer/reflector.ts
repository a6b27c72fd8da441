import { discardLogger, type Logger } from "../log/logger.js";
import { ApiError, isGone, type Status } from "../rest/api-error.js";
import { listAll, type RestClient } from "../rest/client.js";
import type { KubeObject } from "../rest/object.js";
import { apiVersionOf, type ResourceDescriptor } from "../rest/resources.js";
import { Backoff, type BackoffOptions } from "../util/backoff.js";
import { type Clock, realClock, sleep } from "../util/clock.js";

/** Where a reflector puts what it learns. */
export interface ReflectorSink<T extends KubeObject> {
  /** The full state after a list. */
  replace(items: T[], resourceVersion: string): void;
  apply(type: "ADDED" | "MODIFIED" | "DELETED", obj: T): void;
}

export interface ReflectorOptions<T extends KubeObject> {
  client: RestClient;
  resource: ResourceDescriptor<T>;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  clock?: Clock;
  /** [0, 1); drives watch-timeout randomisation and backoff jitter. */
  random?: () => number;
  logger?: Logger;
  /** Restart backoff; 200 ms doubling to 30 s with 10% jitter by default. */
  backoff?: BackoffOptions;
  /**
   * Restart a watch that has delivered no event and no bookmark for this long.
   * The apiserver sends bookmarks about once a minute, so silence well past
   * that means a dead connection. 2 minutes by default; 0 disables.
   */
  stallTimeoutMs?: number;
  /** Server-side watch timeouts are drawn from [min, 2*min) like client-go; 300 s by default. */
  minWatchTimeoutSeconds?: number;
  /** List page size; 500 like client-go. */
  pageSize?: number;
}

/** Thrown inside the loop when the stall guard fires. */
export class WatchStalledError extends Error {
  constructor(ms: number) {
    super(`watch silent for ${ms} ms, restarting it`);
    this.name = "WatchStalledError";
  }
}

/**
 * Keeps a sink in step with the apiserver: list, then watch from the list's
 * resourceVersion; relist on 410; restart with capped backoff after any other
 * failure; restart watches that go silent. It stops only when told to.
 */
export class Reflector<T extends KubeObject> {
  readonly #opts: ReflectorOptions<T>;
  readonly #sink: ReflectorSink<T>;
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #log: Logger;
  readonly #backoff: Backoff;
  #resourceVersion: string | undefined;
  #consecutiveGone = 0;
  #lastError: string | undefined;

  constructor(options: ReflectorOptions<T>, sink: ReflectorSink<T>) {
    this.#opts = options;
    this.#sink = sink;
    this.#clock = options.clock ?? realClock;
    this.#random = options.random ?? Math.random;
    this.#log = (options.logger ?? discardLogger).child({ reflector: options.resource.resource });
    this.#backoff = new Backoff({ random: this.#random, ...options.backoff });
  }

  /** The resourceVersion of the last list, event or bookmark seen. */
  lastSyncResourceVersion(): string | undefined {
    return this.#resourceVersion;
  }

  /** Why the last list or watch failed, until a list or a watch event succeeds again. */
  lastError(): string | undefined {
    return this.#lastError;
  }

  /** Runs until `signal` aborts; never rejects. */
  async run(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      try {
        if (this.#resourceVersion === undefined) await this.#listAndReplace(signal);
        await this.#watch(signal);
      } catch (err) {
        if (signal.aborted) break;
        await this.#recover(err, signal);
      }
    }
  }

  async #recover(err: unknown, signal: AbortSignal): Promise<void> {
    this.#lastError = `list/watch failed: ${err instanceof Error ? err.message : String(err)}`;
    if (isGone(err)) {
      this.#resourceVersion = undefined;
      this.#consecutiveGone++;
      this.#log.info("resourceVersion too old, relisting", { error: err });
      // A first 410 is routine; repeated ones without progress must not turn into a list storm.
      if (this.#consecutiveGone < 2) return;
    } else {
      this.#log.warn("list/watch failed, retrying", { error: err });
    }
    const delay = this.#backoff.next();
    await sleep(this.#clock, delay, signal).catch(() => undefined);
  }

  async #listAndReplace(signal: AbortSignal): Promise<void> {
    const { client, resource, namespace, labelSelector, fieldSelector } = this.#opts;
    const list = await listAll(client, resource, {
      namespace,
      labelSelector,
      fieldSelector,
      limit: this.#opts.pageSize ?? 500,
      signal,
    });
    const rv = list.metadata.resourceVersion ?? "";
    // List items come without apiVersion/kind while watch events carry them; make the cache uniform.
    const typeMeta = { apiVersion: apiVersionOf(resource), kind: resource.kind };
    this.#sink.replace(
      list.items.map((item) => (item.kind ? item : { ...typeMeta, ...item })),
      rv,
    );
    this.#resourceVersion = rv;
    this.#lastError = undefined;
    this.#log.debug("listed", { count: list.items.length, resourceVersion: rv });
  }

  async #watch(signal: AbortSignal): Promise<void> {
    const { client, resource, namespace, labelSelector, fieldSelector } = this.#opts;
    const stallMs = this.#opts.stallTimeoutMs ?? 120_000;
    const minTimeout = this.#opts.minWatchTimeoutSeconds ?? 300;
    const watchAbort = new AbortController();
    const forward = () => watchAbort.abort();
    signal.addEventListener("abort", forward, { once: true });
    let stalled = false;
    let stallTimer: unknown;
    const armStallGuard = () => {
      if (stallMs <= 0) return;
      this.#clock.clearTimeout(stallTimer);
      stallTimer = this.#clock.setTimeout(() => {
        stalled = true;
        watchAbort.abort();
      }, stallMs);
    };
    const startedAt = this.#clock.now();
    let events = 0;
    armStallGuard();
    try {
      const stream = client.watch(resource, {
        namespace,
        labelSelector,
        fieldSelector,
        resourceVersion: this.#resourceVersion,
        allowWatchBookmarks: true,
        timeoutSeconds: Math.floor(minTimeout * (1 + this.#random())),
        signal: watchAbort.signal,
      });
      for await (const event of stream) {
        armStallGuard();
        if (event.type === "ERROR") {
          const status = event.object as unknown as Status;
          throw ApiError.fromStatus(status, `watch ${resource.resource}`);
        }
        const rv = event.object.metadata?.resourceVersion;
        if (event.type !== "BOOKMARK") this.#sink.apply(event.type, event.object);
        if (rv) this.#resourceVersion = rv;
        events++;
        this.#lastError = undefined;
        this.#consecutiveGone = 0;
        this.#backoff.reset();
      }
    } catch (err) {
      if (!stalled && !signal.aborted) throw err;
    } finally {
      this.#clock.clearTimeout(stallTimer);
      signal.removeEventListener("abort", forward);
    }
    if (stalled) throw new WatchStalledError(stallMs);
    if (signal.aborted) return;
    // A watch that closes at once with nothing to say usually means something in between is broken.
    if (events === 0 && this.#clock.now() - startedAt < 1000) {
      throw new Error(`very short watch of ${resource.resource}: closed within a second with no events`);
    }
  }
}
