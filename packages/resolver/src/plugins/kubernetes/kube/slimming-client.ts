import type { KubeObject, ResourceDescriptor, RestClient, WatchEvent } from "@switchyard/kube";

/** A per-resource reduction applied to every object before the informer stores it. */
export type Slimmer = (obj: KubeObject) => KubeObject;

/**
 * A RestClient that slims list items and watch objects on their way to the informers, so their caches
 * only ever hold the reduced objects. Writes pass through untouched. Bookmarks and watch errors are not
 * objects of the kind and are passed on as they are.
 */
export function slimmingClient(client: RestClient, slimmers: ReadonlyMap<string, Slimmer>): RestClient {
  const slimmerFor = (res: ResourceDescriptor) => slimmers.get(resourceKey(res));
  return {
    get: (res, name, opts) => client.get(res, name, opts),
    create: (res, obj, opts) => client.create(res, obj, opts),
    update: (res, obj, opts) => client.update(res, obj, opts),
    patch: (res, name, type, patch, opts) => client.patch(res, name, type, patch, opts),
    delete: (res, name, opts) => client.delete(res, name, opts),
    async list(res, opts) {
      const list = await client.list(res, opts);
      const slim = slimmerFor(res);
      return slim ? { ...list, items: list.items.map((o) => slim(o) as typeof o) } : list;
    },
    watch<T extends KubeObject>(res: ResourceDescriptor<T>, opts?: Parameters<RestClient["watch"]>[1]) {
      const stream = client.watch(res, opts);
      const slim = slimmerFor(res);
      if (!slim) return stream;
      return (async function* (): AsyncIterable<WatchEvent<T>> {
        for await (const event of stream) {
          const keep = event.type === "BOOKMARK" || event.type === "ERROR";
          yield keep ? event : { type: event.type, object: slim(event.object) as T };
        }
      })();
    },
  };
}

/** The key `slimmingClient` looks resources up by. */
export function resourceKey(res: ResourceDescriptor): string {
  return `${res.group}/${res.resource}`;
}
