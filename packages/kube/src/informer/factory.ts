import type { Logger } from "../log/logger.js";
import type { RestClient } from "../rest/client.js";
import type { KubeObject } from "../rest/object.js";
import type { ResourceDescriptor } from "../rest/resources.js";
import type { Clock } from "../util/clock.js";
import type { Indexers } from "./indexers.js";
import { Informer, type InformerOptions } from "./informer.js";

export interface InformerFactoryOptions
  extends Omit<
    InformerOptions<KubeObject>,
    "resource" | "indexers" | "namespace" | "labelSelector" | "fieldSelector" | "transform"
  > {
  client: RestClient;
  clock?: Clock;
  logger?: Logger;
  /** Restrict every informer to one namespace. */
  namespace?: string;
}

export interface InformerRequest<T extends KubeObject> {
  labelSelector?: string;
  fieldSelector?: string;
  indexers?: Indexers<T>;
  /** See InformerOptions.transform. The informer is shared: the first request's transform is the one used. */
  transform?: (obj: T) => T;
}

/**
 * Hands out one shared informer per (resource, selectors), so several
 * controllers in a process share one watch and one cache.
 */
export class InformerFactory {
  readonly #options: InformerFactoryOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  #signal: AbortSignal | undefined;

  constructor(options: InformerFactoryOptions) {
    this.#options = options;
  }

  informerFor<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    request: InformerRequest<T> = {},
  ): Informer<T> {
    const key = [res.group, res.resource, request.labelSelector ?? "", request.fieldSelector ?? ""].join("|");
    let informer = this.#informers.get(key) as Informer<T> | undefined;
    if (!informer) {
      informer = new Informer<T>({
        ...this.#options,
        resource: res,
        namespace: res.namespaced ? this.#options.namespace : undefined,
        labelSelector: request.labelSelector,
        fieldSelector: request.fieldSelector,
        ...(request.transform ? { transform: request.transform } : {}),
      });
      this.#informers.set(key, informer as unknown as Informer<KubeObject>);
      // Informers asked for after start() join the running set.
      if (this.#signal) informer.start(this.#signal);
    }
    if (request.indexers) informer.addIndexers(request.indexers);
    return informer;
  }

  /** Starts every informer made so far and any made later, until `signal` aborts. */
  start(signal: AbortSignal): void {
    this.#signal = signal;
    for (const informer of this.#informers.values()) informer.start(signal);
  }

  /** Resolves true when every informer has synced, false if `signal` aborts first. */
  async waitForCacheSync(signal?: AbortSignal): Promise<boolean> {
    const results = await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(signal)));
    return results.every(Boolean);
  }

  /** True when every informer has synced; a readiness check. */
  hasSynced(): boolean {
    return [...this.#informers.values()].every((i) => i.hasSynced());
  }

  /** "resource: why" for every informer not synced yet; empty once all have. For readiness bodies. */
  notSynced(): string[] {
    return [...this.#informers.values()].flatMap((informer) => {
      const reason = informer.notSyncedReason();
      return reason === undefined ? [] : [`${informer.resource.resource}: ${reason}`];
    });
  }

  async stop(): Promise<void> {
    await Promise.all([...this.#informers.values()].map((i) => i.stop()));
  }
}
