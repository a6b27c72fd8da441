import {
  type Clock,
  type EventRecorder,
  type Informer,
  indexNames,
  type Logger,
  type RateLimitingQueue,
  type RestClient,
  realClock,
  runWorkers,
} from "@switchyard/kube";
import {
  type EndpointSlice,
  LABEL_MANAGED_BY,
  MIRRORING_CONTROLLER_NAME,
  mirrorEndpoints,
  type SliceOperation,
  shouldMirror,
  staleSlices,
  trackerDeleteService,
} from "@switchyard/slice-controller";
import type { Endpoints, Service } from "kubernetes-types/core/v1.js";
import { applyOperations, type TrackerRef } from "./apply.js";
import type { MirroringMetrics } from "./metrics.js";
import { ownWritesSeen } from "./own-writes.js";
import { sliceEventHandler } from "./slice-events.js";

export interface MirroringControllerOptions {
  client: RestClient;
  services: Informer<Service>;
  endpoints: Informer<Endpoints>;
  slices: Informer<EndpointSlice>;
  queue: RateLimitingQueue<string>;
  recorder: EventRecorder;
  metrics: MirroringMetrics;
  logger: Logger;
  maxEndpointsPerSubset: number;
  /** --mirroring-endpointslice-updates-batch-period, in ms. */
  batchPeriodMs: number;
  clock?: Clock;
}

const MAX_RETRIES = 15;

/**
 * Mirrors the Endpoints of selectorless Services into EndpointSlices, so consumers that read only
 * slices (kube-proxy, CoreDNS) see endpoints a user or another controller manages by hand. Keys are
 * "namespace/name", shared by the Service and its Endpoints.
 */
export class MirroringController {
  readonly #o: MirroringControllerOptions;
  readonly #log: Logger;
  readonly #tracker: TrackerRef = { value: {} };

  constructor(options: MirroringControllerOptions) {
    this.#o = options;
    this.#log = options.logger.child({ controller: "endpointslicemirroring" });
    const { queue, batchPeriodMs } = options;
    const keyOf = (o: Service | Endpoints) => `${o.metadata?.namespace}/${o.metadata?.name}`;
    const add = (o: Service | Endpoints) => queue.addAfter(keyOf(o), batchPeriodMs);
    const handlers = { onAdd: add, onUpdate: (_: unknown, o: Service | Endpoints) => add(o), onDelete: add };
    options.endpoints.addEventHandler(handlers);
    // A Service gaining or losing its selector decides whether its Endpoints are mirrored at all.
    options.services.addEventHandler({
      onAdd: (svc) => queue.add(keyOf(svc)),
      onUpdate: (old, svc) => {
        if ((old.spec?.selector == null) !== (svc.spec?.selector == null)) queue.add(keyOf(svc));
      },
      onDelete: (svc) => queue.add(keyOf(svc)),
    });
    options.slices.addEventHandler(
      sliceEventHandler({
        managedBy: MIRRORING_CONTROLLER_NAME,
        tracker: this.#tracker,
        enqueue: (key) => queue.addAfter(key, batchPeriodMs),
      }),
    );
  }

  /** Runs `workers` workers until the queue shuts down; keys still queued then are dropped, as the slice controller does. */
  run(workers: number): Promise<void> {
    const { queue } = this.#o;
    const sync = async (key: string) => {
      if (!queue.shuttingDown()) await this.syncEndpoints(key);
    };
    return runWorkers(queue, workers, sync, { maxRetries: MAX_RETRIES, logger: this.#log });
  }

  #managedSlices(key: string): EndpointSlice[] {
    return this.#o.slices
      .byIndex(indexNames.serviceName, key)
      .filter((s) => s.metadata?.labels?.[LABEL_MANAGED_BY] === MIRRORING_CONTROLLER_NAME);
  }

  async syncEndpoints(key: string, waited = false): Promise<void> {
    const { services, endpoints, client } = this.#o;
    const service = services.getByKey(key);
    const object = endpoints.getByKey(key);
    const listed = this.#managedSlices(key);
    if (staleSlices(this.#tracker.value, key, listed)) {
      // Everything read so far may have moved on while waiting, so the sync starts over.
      const stale = () => staleSlices(this.#tracker.value, key, this.#managedSlices(key));
      if (!waited && (await ownWritesSeen(stale, this.#o.clock ?? realClock))) {
        return this.syncEndpoints(key, true);
      }
      throw new Error(`EndpointSlice informer cache is out of date for Endpoints ${key}`);
    }
    const existingSlices = listed.filter((s) => s.metadata?.deletionTimestamp == null);

    if (object === undefined || !shouldMirror(object, service)) {
      const operations: SliceOperation[] = existingSlices.map((slice) => ({ verb: "delete", slice }));
      await applyOperations(client, operations, this.#tracker, (verb) => this.#o.metrics.change(verb));
      if (service === undefined && object === undefined) {
        this.#tracker.value = trackerDeleteService(this.#tracker.value, key);
      }
      return;
    }

    const plan = mirrorEndpoints({
      endpoints: object,
      existingSlices,
      maxEndpointsPerSubset: this.#o.maxEndpointsPerSubset,
    });
    const subject = { apiVersion: "v1", kind: "Endpoints", metadata: object.metadata };
    for (const e of plan.events) this.#o.recorder.event(subject, e.type, e.reason, e.message);
    const operations: SliceOperation[] = [
      ...plan.toCreate.map((slice) => ({ verb: "create" as const, slice })),
      ...plan.toUpdate.map((slice) => ({ verb: "update" as const, slice })),
      ...plan.toDelete.map((slice) => ({ verb: "delete" as const, slice })),
    ];
    await applyOperations(client, operations, this.#tracker, (verb) => this.#o.metrics.change(verb));
    this.#o.metrics.observeSync(plan.metrics);
  }
}
