import {
  byServiceName,
  type Clock,
  defaultControllerRateLimiter,
  EventRecorder,
  endpointSlices,
  endpoints,
  type Informer,
  type InformerFactory,
  indexNames,
  type Logger,
  nodes,
  pods,
  RateLimitingQueue,
  type RestClient,
  services,
} from "@switchyard/kube";
import type { EndpointSlice } from "@switchyard/slice-controller";
import type { Registry } from "prom-client";
import {
  ENDPOINTSLICE_CONTROLLER,
  type EnabledControllers,
  MIRRORING_CONTROLLER,
} from "./cli/controllers.js";
import type { ControllerFlags } from "./cli/flags.js";
import { EndpointSliceController } from "./endpointslice-controller.js";
import { ControllerMetrics, MirroringMetrics } from "./metrics.js";
import { MirroringController } from "./mirroring-controller.js";

// Upstream's event sources, so `kubectl get events` reads the same as with kube-controller-manager.
const COMPONENT = "endpoint-slice-controller";
const MIRRORING_COMPONENT = "endpoint-slice-mirroring-controller";

/**
 * One controller with what it owns: started by run, stopped by shutDown (syncs in flight finish, keys still
 * queued are dropped), its events sent by flush.
 */
export interface RunningController {
  name: string;
  run(): Promise<void>;
  shutDown(): Promise<void>;
  flush(): Promise<void>;
}

export interface ControllerSetDeps {
  factory: InformerFactory;
  /** A new client for each controller: each gets its own rate limit, as in kube-controller-manager. */
  newClient: () => RestClient;
  registry: Registry;
  logger: Logger;
  clock: Clock;
  identity: string;
  sliceControllerName?: string;
}

/**
 * The controllers --controllers enables, each with its queue and recorder, and only the informers they read: a
 * Deployment running the mirroring controller alone neither caches nor needs RBAC for Pods and Nodes.
 */
export function buildControllers(
  flags: ControllerFlags,
  enabled: EnabledControllers,
  deps: ControllerSetDeps,
): RunningController[] {
  const { factory, registry, logger, clock } = deps;
  const serviceInformer = factory.informerFor(services);
  const slices = factory.informerFor(endpointSlices, {
    indexers: { [indexNames.serviceName]: byServiceName },
  }) as unknown as Informer<EndpointSlice>;
  const out: RunningController[] = [];

  if (enabled.endpointSlice) {
    const client = deps.newClient();
    const recorder = new EventRecorder({ client, component: COMPONENT, host: deps.identity, clock, logger });
    const queue = new RateLimitingQueue<string>({ name: "endpoint_slice", registry, clock });
    const controller = new EndpointSliceController({
      client,
      services: serviceInformer,
      pods: factory.informerFor(pods, { transform: withoutManagedFields }),
      nodes: factory.informerFor(nodes, { transform: withoutManagedFields }),
      slices,
      queue,
      recorder,
      metrics: new ControllerMetrics(registry),
      logger,
      maxEndpointsPerSlice: flags.maxEndpointsPerSlice,
      batchPeriodMs: flags.endpointUpdatesBatchPeriodMs,
      clock,
      ...(deps.sliceControllerName ? { controllerName: deps.sliceControllerName } : {}),
    });
    out.push({
      name: ENDPOINTSLICE_CONTROLLER,
      run: () => controller.run(flags.concurrentServiceEndpointSyncs),
      shutDown: () => queue.shutDownWithDrain(),
      flush: () => recorder.flush(),
    });
  }

  if (enabled.mirroring) {
    const client = deps.newClient();
    const recorder = new EventRecorder({
      client,
      component: MIRRORING_COMPONENT,
      host: deps.identity,
      clock,
      logger,
    });
    const queue = new RateLimitingQueue<string>({
      name: "endpoint_slice_mirroring",
      registry,
      clock,
      // Upstream's mirroring controller caps its backoff at 100 s rather than 1000 s.
      rateLimiter: defaultControllerRateLimiter({ maxDelayMs: 100_000, clock }),
    });
    const controller = new MirroringController({
      client,
      services: serviceInformer,
      endpoints: factory.informerFor(endpoints),
      slices,
      queue,
      recorder,
      metrics: new MirroringMetrics(registry),
      logger,
      maxEndpointsPerSubset: flags.mirroringMaxEndpointsPerSubset,
      batchPeriodMs: flags.mirroringEndpointUpdatesBatchPeriodMs,
      clock,
    });
    out.push({
      name: MIRRORING_CONTROLLER,
      run: () => controller.run(flags.mirroringConcurrentServiceEndpointSyncs),
      shutDown: () => queue.shutDownWithDrain(),
      flush: () => recorder.flush(),
    });
  }
  return out;
}

/**
 * managedFields is often the largest part of a Pod or Node and nothing here reads it; dropping it before the
 * cache keeps memory and per-event work down in clusters with many pods.
 */
function withoutManagedFields<T extends { metadata?: { managedFields?: unknown } }>(obj: T): T {
  if (obj.metadata?.managedFields === undefined) return obj;
  const { managedFields: _dropped, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}
