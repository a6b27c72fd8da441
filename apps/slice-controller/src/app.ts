import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  type Clock,
  clusterAccess,
  HttpRestClient,
  InformerFactory,
  LeaderElector,
  LeaseLock,
  type Logger,
  realClock,
} from "@switchyard/kube";
import { Registry } from "prom-client";
import { checkApiserver } from "./api-check.js";
import { enabledControllers } from "./cli/controllers.js";
import type { ControllerFlags } from "./cli/flags.js";
import { buildControllers } from "./controller-set.js";
import { startServers } from "./servers.js";
import { ThrottledClient } from "./throttled-client.js";

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

/** Connects, starts informers and servers, and runs both controllers (while leading, if elected). */
export async function startApp(flags: ControllerFlags, options: AppOptions): Promise<App> {
  const { logger } = options;
  const clock = options.clock ?? realClock;
  const identity = options.identity ?? `${hostname()}_${randomUUID()}`;
  // --master replaces the kubeconfig's server, as kube-controller-manager's client-go BuildConfigFromFlags does.
  const kc = clusterAccess(flags.kubeconfig ?? "", flags.master);
  const connection = new HttpRestClient(kc, { userAgent: "switchyard-slice-controller" });
  await checkApiserver(connection, connection.server.origin);
  // One rate limit per client, as kube-controller-manager gives informers, each controller and leader election.
  const newClient = () => new ThrottledClient(connection, flags.kubeApiQps, flags.kubeApiBurst, clock);

  const registry = new Registry();
  const abort = new AbortController();
  // Losing the Lease ends the controllers' requests in flight at once, as kube-controller-manager's exit does: the
  // next leader may write as soon as the Lease expires for it, and no write of ours may land after that.
  const leaseLost = new AbortController();
  const newControllerClient = () =>
    new ThrottledClient(connection, flags.kubeApiQps, flags.kubeApiBurst, clock, leaseLost.signal);
  const factory = new InformerFactory({ client: newClient(), clock, logger });
  const controllers = buildControllers(flags, enabledControllers(flags.controllers), {
    factory,
    newClient: newControllerClient,
    registry,
    logger,
    clock,
    identity,
    ...(options.sliceControllerName ? { sliceControllerName: options.sliceControllerName } : {}),
  });

  let leading = false;
  let workers: Promise<void> | undefined;
  const runControllers = async () => {
    if (!(await factory.waitForCacheSync(abort.signal))) return;
    leading = true;
    logger.info("caches synced, starting workers", {
      controllers: controllers.map((c) => c.name).join(","),
      workers: flags.concurrentServiceEndpointSyncs,
      mirroringWorkers: flags.mirroringConcurrentServiceEndpointSyncs,
    });
    await Promise.all(controllers.map((c) => c.run()));
  };
  // Queues cannot restart, so losing the Lease ends the app; kube-controller-manager exits then too.
  let stopping: Promise<void> | undefined;
  const stopWorkers = () =>
    (stopping ??= (async () => {
      await Promise.all(controllers.map((c) => c.shutDown()));
      await workers;
      leading = false;
    })());
  const elector = flags.leaderElect
    ? new LeaderElector({
        lock: new LeaseLock(newClient(), flags.leaseNamespace, flags.leaseName),
        identity,
        leaseDurationMs: flags.leaseDurationMs,
        renewDeadlineMs: flags.renewDeadlineMs,
        retryPeriodMs: flags.retryPeriodMs,
        releaseOnCancel: true,
        clock,
        logger,
        callbacks: {
          onStartedLeading: (leadingSignal) => {
            leadingSignal.addEventListener(
              "abort",
              () => {
                // A stop of ours lets the workers finish what they hold; a lost Lease does not.
                if (!abort.signal.aborted) leaseLost.abort(new Error("leader election lost"));
              },
              { once: true },
            );
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
      // Syncs in flight finish before the Lease is handed back: a standby that took over sooner would write the
      // same Services' slices at the same time, and could create a second slice for one.
      await stopWorkers();
      abort.abort();
      await done;
      await factory.stop();
      await Promise.all(controllers.map((c) => c.flush()));
      await servers.stop();
    },
  };
}
