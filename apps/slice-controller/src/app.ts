import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  byServiceName,
  type Clock,
  defaultControllerRateLimiter,
  EventRecorder,
  endpointSlices,
  endpoints,
  HttpRestClient,
  type Informer,
  InformerFactory,
  indexNames,
  LeaderElector,
  LeaseLock,
  type Logger,
  loadKubeConfig,
  nodes,
  pods,
  RateLimitingQueue,
  realClock,
  services,
} from "@switchyard/kube";
import type { EndpointSlice } from "@switchyard/slice-controller";
import { Registry } from "prom-client";
import { checkApiserver } from "./api-check.js";
import type { ControllerFlags } from "./cli/flags.js";
import { EndpointSliceController } from "./endpointslice-controller.js";
import { ControllerMetrics, MirroringMetrics } from "./metrics.js";
import { MirroringController } from "./mirroring-controller.js";
import { startServers } from "./servers.js";

export interface AppOptions {
  logger: Logger;
  clock?: Clock;
  /** Leader-election identity; hostname plus a random suffix by default, as client-go does. */
  identity?: string;
  /** Managed-by value of the EndpointSlice controller's slices; only tests running next to upstream's change it. */
  sliceControllerName?: string;
}

export interface App {
  /** Where /metrics (and health, unless separate) is served; undefined when disabled. */
  metricsAddress: string | undefined;
  healthzAddress: string | undefined;
  identity: string;
  /** Resolves when the app ends: "stopped" after stop(), "leadership-lost" when the Lease was lost. */
  done: Promise<"stopped" | "leadership-lost">;
  isLeading(): boolean;
  stop(): Promise<void>;
}

// Upstream's event sources, so `kubectl get events` reads the same as with kube-controller-manager.
const COMPONENT = "endpoint-slice-controller";
const MIRRORING_COMPONENT = "endpoint-slice-mirroring-controller";

/** Connects, starts informers and servers, and runs both controllers (while leading, if elected). */
export async function startApp(flags: ControllerFlags, options: AppOptions): Promise<App> {
  const { logger } = options;
  const clock = options.clock ?? realClock;
  const identity = options.identity ?? `${hostname()}_${randomUUID()}`;
  const kc = loadKubeConfig({ kubeconfig: flags.kubeconfig });
  const client = new HttpRestClient(kc, { userAgent: "switchyard-slice-controller" });
  await checkApiserver(client, client.server.origin);

  const registry = new Registry();
  const abort = new AbortController();
  const factory = new InformerFactory({ client, clock, logger });
  const serviceInformer = factory.informerFor(services);
  const endpointsInformer = factory.informerFor(endpoints);
  const slices = factory.informerFor(endpointSlices, {
    indexers: { [indexNames.serviceName]: byServiceName },
  }) as unknown as Informer<EndpointSlice>;

  const recorder = (component: string) =>
    new EventRecorder({ client, component, host: identity, clock, logger });
  const sliceQueue = new RateLimitingQueue<string>({ name: "endpoint_slice", registry, clock });
  const mirroringQueue = new RateLimitingQueue<string>({
    name: "endpoint_slice_mirroring",
    registry,
    clock,
    // Upstream's mirroring controller caps its backoff at 100 s rather than 1000 s.
    rateLimiter: defaultControllerRateLimiter({ maxDelayMs: 100_000, clock }),
  });
  const sliceRecorder = recorder(COMPONENT);
  const mirroringRecorder = recorder(MIRRORING_COMPONENT);
  const sliceController = new EndpointSliceController({
    client,
    services: serviceInformer,
    pods: factory.informerFor(pods, { transform: withoutManagedFields }),
    nodes: factory.informerFor(nodes, { transform: withoutManagedFields }),
    slices,
    queue: sliceQueue,
    recorder: sliceRecorder,
    metrics: new ControllerMetrics(registry),
    logger,
    maxEndpointsPerSlice: flags.maxEndpointsPerSlice,
    batchPeriodMs: flags.endpointUpdatesBatchPeriodMs,
    clock,
    ...(options.sliceControllerName ? { controllerName: options.sliceControllerName } : {}),
  });
  const mirroringController = new MirroringController({
    client,
    services: serviceInformer,
    endpoints: endpointsInformer,
    slices,
    queue: mirroringQueue,
    recorder: mirroringRecorder,
    metrics: new MirroringMetrics(registry),
    logger,
    maxEndpointsPerSubset: flags.mirroringMaxEndpointsPerSubset,
    batchPeriodMs: flags.mirroringEndpointUpdatesBatchPeriodMs,
    clock,
  });

  let leading = false;
  let workers: Promise<void> | undefined;
  const runControllers = async () => {
    if (!(await factory.waitForCacheSync(abort.signal))) return;
    leading = true;
    logger.info("caches synced, starting workers", {
      workers: flags.concurrentServiceEndpointSyncs,
      mirroringWorkers: flags.mirroringConcurrentServiceEndpointSyncs,
    });
    await Promise.all([
      sliceController.run(flags.concurrentServiceEndpointSyncs),
      mirroringController.run(flags.mirroringConcurrentServiceEndpointSyncs),
    ]);
  };
  // Queues cannot restart, so losing the Lease ends the app; kube-controller-manager exits then too.
  const stopWorkers = async () => {
    await Promise.all([sliceQueue.shutDownWithDrain(), mirroringQueue.shutDownWithDrain()]);
    await workers;
    leading = false;
  };
  const elector = flags.leaderElect
    ? new LeaderElector({
        lock: new LeaseLock(client, flags.leaseNamespace, flags.leaseName),
        identity,
        leaseDurationMs: flags.leaseDurationMs,
        renewDeadlineMs: flags.renewDeadlineMs,
        retryPeriodMs: flags.retryPeriodMs,
        releaseOnCancel: true,
        clock,
        logger,
        callbacks: {
          onStartedLeading: () => {
            workers = runControllers();
          },
          onNewLeader: (holder) => logger.info("new leader elected", { leader: holder }),
        },
      })
    : undefined;

  const servers = await startServers(flags, registry, logger, {
    // The stuck-leader case: workers still running after the elector stopped holding the Lease.
    leaderElection: () => {
      if (leading && elector !== undefined && !elector.isLeader()) throw new Error("leader lease lost");
    },
    informerSync: () => {
      if (!factory.hasSynced()) throw new Error("informers not synced");
    },
  });

  // Informers run on every replica, so a standby takes over with a warm cache.
  factory.start(abort.signal);
  const done = (async (): Promise<"stopped" | "leadership-lost"> => {
    if (elector === undefined) {
      workers = runControllers();
      await new Promise((resolve) => abort.signal.addEventListener("abort", resolve, { once: true }));
    } else {
      // Returns when the Lease is lost or the signal aborts; the workers stop with it.
      await elector.run(abort.signal);
    }
    await stopWorkers();
    return abort.signal.aborted ? "stopped" : "leadership-lost";
  })();

  return {
    metricsAddress: servers.metricsAddress,
    healthzAddress: servers.healthzAddress,
    identity,
    done,
    isLeading: () => leading && (elector === undefined || elector.isLeader()),
    async stop() {
      abort.abort();
      await done;
      await factory.stop();
      await Promise.all([sliceRecorder.flush(), mirroringRecorder.flush()]);
      await servers.stop();
    },
  };
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
