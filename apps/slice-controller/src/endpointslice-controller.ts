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
  CONTROLLER_NAME,
  EMPTY_TOPOLOGY_CACHE,
  type EndpointSlice,
  finalize,
  LABEL_MANAGED_BY,
  reconcile,
  removeServiceHints,
  staleSlices,
  type TopologyCacheState,
  trackerDeleteService,
} from "@switchyard/slice-controller";
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import { applyOperations, type TrackerRef } from "./apply.js";
import type { ControllerMetrics } from "./metrics.js";
import { NodeTopology } from "./node-topology.js";
import { ownWritesSeen } from "./own-writes.js";
import { servicesForPodUpdate, servicesSelecting } from "./pod-services.js";
import { selectorMatches } from "./selector.js";
import { sliceEventHandler } from "./slice-events.js";
import { TriggerTimes } from "./trigger-times.js";

/** Refusing to write on a cache older than our own writes; counted as syncs{result="stale"}. */
export class StaleInformerCacheError extends Error {
  override name = "StaleInformerCacheError";
}

export interface EndpointSliceControllerOptions {
  client: RestClient;
  services: Informer<Service>;
  pods: Informer<Pod>;
  nodes: Informer<Node>;
  slices: Informer<EndpointSlice>;
  queue: RateLimitingQueue<string>;
  recorder: EventRecorder;
  metrics: ControllerMetrics;
  logger: Logger;
  maxEndpointsPerSlice: number;
  /** --endpointslice-updates-batch-period, in ms. */
  batchPeriodMs: number;
  /**
   * The managed-by value of the slices written and read; endpointslice-controller.k8s.io unless a test
   * runs this controller next to kube-controller-manager's, which must not see our slices as its own.
   */
  controllerName?: string;
  clock?: Clock;
}

// Syncs caused by slice events wait at least this long, so a burst of our own echoes is one sync.
const SLICE_CHANGE_MIN_DELAY_MS = 1000;
const MAX_RETRIES = 15;

/**
 * The EndpointSlice controller loop: informer events become Service keys on a rate-limited queue,
 * and each key is synced by reconciling the Service's Pods into its slices.
 */
export class EndpointSliceController {
  readonly #o: EndpointSliceControllerOptions;
  readonly #log: Logger;
  readonly #tracker: TrackerRef = { value: {} };
  readonly #triggerTimes = new TriggerTimes();
  readonly #topology: NodeTopology;
  readonly #controllerName: string;
  #topologyCache: TopologyCacheState = EMPTY_TOPOLOGY_CACHE;

  constructor(options: EndpointSliceControllerOptions) {
    this.#o = options;
    this.#log = options.logger.child({ controller: "endpointslice" });
    this.#controllerName = options.controllerName ?? CONTROLLER_NAME;
    this.#topology = new NodeTopology(
      () => this.#topologyCache,
      (next) => {
        this.#topologyCache = next;
      },
    );
    this.#registerHandlers();
  }

  #registerHandlers(): void {
    const { services, pods, nodes, slices, queue, batchPeriodMs } = this.#o;
    const add = (svc: Service) => queue.add(`${svc.metadata?.namespace}/${svc.metadata?.name}`);
    services.addEventHandler({ onAdd: add, onUpdate: (_, svc) => add(svc), onDelete: add });

    const podKeys = (keys: string[]) => {
      for (const key of keys) queue.addAfter(key, batchPeriodMs);
    };
    pods.addEventHandler({
      onAdd: (pod) => podKeys(servicesSelecting(services, pod)),
      onUpdate: (oldPod, pod) => podKeys(servicesForPodUpdate(services, oldPod, pod)),
      onDelete: (pod) => podKeys(servicesSelecting(services, pod)),
    });

    nodes.addEventHandler({
      onAdd: () => this.#nodesChanged(),
      onUpdate: (oldNode, node) => {
        if (NodeTopology.relevantChange(oldNode, node)) this.#nodesChanged();
      },
      onDelete: () => this.#nodesChanged(),
    });

    slices.addEventHandler(
      sliceEventHandler({
        managedBy: this.#controllerName,
        tracker: this.#tracker,
        enqueue: (key) => queue.addAfter(key, Math.max(SLICE_CHANGE_MIN_DELAY_MS, batchPeriodMs)),
      }),
    );
  }

  #nodesChanged(): void {
    const requeue = this.#topology.update(this.#o.nodes.list(), this.#o.services.list());
    for (const key of requeue) this.#o.queue.add(key);
  }

  /**
   * Runs `workers` workers until the queue shuts down. Keys still queued then are dropped, not synced: the next
   * leader (or the next start) syncs every Service anyway, and one that stopped leading must stop writing.
   */
  run(workers: number): Promise<void> {
    const { queue } = this.#o;
    const sync = async (key: string) => {
      if (!queue.shuttingDown()) await this.#syncAndCount(key);
    };
    return runWorkers(queue, workers, sync, { maxRetries: MAX_RETRIES, logger: this.#log });
  }

  async #syncAndCount(key: string): Promise<void> {
    const started = performance.now();
    try {
      await this.syncService(key);
      this.#o.metrics.syncDone("success");
    } catch (err) {
      this.#o.metrics.syncDone(err instanceof StaleInformerCacheError ? "stale" : "error");
      throw err;
    } finally {
      this.#log.v(4).debug("finished syncing Service", { key, ms: Math.round(performance.now() - started) });
    }
  }

  /** Makes one Service's slices match its Pods. Throws to be retried with backoff. */
  async syncService(key: string, waited = false): Promise<void> {
    const { services, pods, nodes, client, metrics } = this.#o;
    const [namespace = "", name = ""] = key.split("/");
    const service = services.get(namespace, name);
    if (service === undefined) {
      this.#forget(key);
      return;
    }
    const selector = service.spec?.selector;
    // ExternalName Services have no endpoints; selectorless ones get theirs from whoever manages them.
    if (service.spec?.type === "ExternalName" || selector == null) return;

    const listed = this.#managedSlices(key);
    if (staleSlices(this.#tracker.value, key, listed)) {
      // Everything read so far may have moved on while waiting, so the sync starts over.
      const stale = () => staleSlices(this.#tracker.value, key, this.#managedSlices(key));
      if (!waited && (await ownWritesSeen(stale, this.#o.clock ?? realClock))) {
        return this.syncService(key, true);
      }
      throw new StaleInformerCacheError(`EndpointSlice informer cache is out of date for Service ${key}`);
    }
    const selected = pods.list(namespace).filter((pod) => selectorMatches(selector, pod.metadata?.labels));
    const existingSlices = listed.filter((s) => s.metadata?.deletionTimestamp == null);

    const topologyCache = this.#topologyCache;
    const plan = reconcile({
      service,
      pods: selected,
      nodes: (nodeName) => nodes.get(undefined, nodeName),
      existingSlices,
      triggerTime: this.#triggerTimes.compute(key, service, selected),
      topologyCache,
      options: { maxEndpointsPerSlice: this.#o.maxEndpointsPerSlice, controllerName: this.#controllerName },
    });
    // reconcile is synchronous, so no other sync changed the cache in between.
    this.#topologyCache = plan.topologyCache ?? topologyCache;

    const result = finalize(plan);
    const subject = { apiVersion: "v1", kind: "Service", metadata: service.metadata };
    try {
      await applyOperations(client, result.operations, this.#tracker);
      if (plan.errors.length > 0) throw new Error(plan.errors.join("; "));
    } catch (err) {
      const message = `Error updating Endpoint Slices for Service ${key}: ${(err as Error).message}`;
      this.#o.recorder.event(subject, "Warning", "FailedToUpdateEndpointSlices", message);
      throw err;
    } finally {
      for (const e of plan.events) this.#o.recorder.event(subject, e.type, e.reason, e.message);
    }
    metrics.observeSync(key, plan.metrics, result);
  }

  #managedSlices(key: string): EndpointSlice[] {
    return this.#o.slices
      .byIndex(indexNames.serviceName, key)
      .filter((s) => s.metadata?.labels?.[LABEL_MANAGED_BY] === this.#controllerName);
  }

  #forget(key: string): void {
    this.#tracker.value = trackerDeleteService(this.#tracker.value, key);
    this.#triggerTimes.delete(key);
    this.#o.metrics.deleteService(key);
    let cache = this.#topologyCache;
    for (const type of ["IPv4", "IPv6"] as const) cache = removeServiceHints(cache, key, type);
    this.#topologyCache = cache;
  }
}
