// The program's one place of I/O wiring: the node's initialization (node-init.ts), then a
// Proxier per family, serve metrics and health, and feed the informers into the proxiers.
import { endpointSlices, InformerFactory, nodes, services } from "@switchyard/kube";
import {
  ConntrackCLI,
  type Exec,
  httpHealthListen,
  type IPTablesBackend,
  MetaProxier,
  newProxyMetrics,
  PROXY_LABEL_SELECTOR,
  Proxier,
  ProxyHealth,
  platformCleanup,
  realExec,
  ServiceHealthServer,
  systemClock,
} from "@switchyard/proxier";
import type { Node, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { collectDefaultMetrics } from "prom-client";
import type { ResolvedOptions } from "./config/config.js";
import { cleanupTargets, createBackend } from "./dataplane.js";
import { withInjectedFaults } from "./faults.js";
import { type InitOptions, initializeNode } from "./node-init.js";

export { nodeNameOf } from "./node-init.js";

import { startServers } from "./servers.js";
import { watchServiceCIDRs } from "./service-cidrs.js";

export interface AppOptions extends InitOptions {
  readonly iptablesBackend?: IPTablesBackend;
  /** What /configz serves: the configuration as a v1alpha1 object (config/v1alpha1.ts). */
  readonly configz?: Record<string, unknown>;
}

export interface App {
  readonly nodeName: string;
  readonly metricsAddress: string | undefined;
  readonly healthzAddress: string | undefined;
  readonly meta: MetaProxier;
  stop(): Promise<void>;
}

/** --cleanup: every mode's rules go, then the caller exits. */
export async function cleanupAndExit(exec: Exec = realExec): Promise<void> {
  await platformCleanup(cleanupTargets(withInjectedFaults(exec)), "nftables", true);
}

/** --init-only: the privileged steps of a start (node-init.ts), then the caller exits 0. */
export async function initOnlyAndExit(o: ResolvedOptions, opts: InitOptions): Promise<void> {
  await initializeNode(o, opts);
  opts.logger.info("System initialized and --init-only specified");
}

export async function startApp(o: ResolvedOptions, opts: AppOptions): Promise<App> {
  const { logger } = opts;
  const { exec, nodeName, client, info, families, nodeIPs, kernel } = await initializeNode(o, opts);
  const metrics = newProxyMetrics(o.mode);
  // The process_* metrics every Go component exports (CPU, resident memory, open fds, start time), from
  // prom-client's collectors, so dashboards built on upstream's find them; nodejs_* come along.
  collectDefaultMetrics({ register: metrics.registry });
  const health = new ProxyHealth({
    clock: systemClock,
    healthTimeoutMs: 2 * o.syncPeriodMs,
    onResponse: (path, status) =>
      (path === "/healthz" ? metrics.proxyHealthzTotal : metrics.proxyLivezTotal).inc({
        code: String(status),
      }),
  });
  const serviceHealth = new ServiceHealthServer({
    listen: httpHealthListen(),
    proxyHealthy: () => health.isHealthy(),
    onListenError: (service, port, error) =>
      logger.warn("cannot serve a healthCheckNodePort", { service, port, error }),
  });
  const proxiers: Proxier[] = [];
  for (const [i, family] of families.entries()) {
    const flog = logger.child({ ipFamily: family });
    const backend = await createBackend(
      {
        options: o,
        nodeName,
        node: info.node,
        nodeIPs,
        exec,
        metrics,
        logger: flog,
        tcpBeLiberal: kernel.tcpBeLiberal,
        iptablesBackend: opts.iptablesBackend,
      },
      family,
    );
    proxiers.push(
      new Proxier({
        nodeName,
        backend,
        metrics,
        health,
        // Both families share the node's ports, so only the primary serves health checks.
        serviceHealth: i === 0 ? serviceHealth : undefined,
        conntrack: new ConntrackCLI(exec),
        minSyncPeriodMs: o.minSyncPeriodMs,
        syncPeriodMs: o.syncPeriodMs,
        logger: flog,
      }),
    );
  }
  const meta = new MetaProxier(proxiers, health);
  meta.onNode(info.node);

  const servers = await startServers({
    metricsBindAddress: o.metricsBindAddress,
    healthzBindAddress: o.healthzBindAddress,
    registry: metrics.registry,
    health,
    mode: o.mode,
    bindAddressHardFail: o.bindAddressHardFail,
    logger,
    ...(opts.configz ? { configz: opts.configz } : {}),
  });

  const abort = new AbortController();
  const factory = new InformerFactory({ client, logger });
  const serviceInformer = factory.informerFor(services, { labelSelector: PROXY_LABEL_SELECTOR });
  serviceInformer.addEventHandler({
    onAdd: (s) => meta.onServiceUpdate(undefined, s as Service),
    onUpdate: (a, b) => meta.onServiceUpdate(a as Service, b as Service),
    onDelete: (s) => meta.onServiceUpdate(s as Service, undefined),
  });
  const sliceInformer = factory.informerFor(endpointSlices, { labelSelector: PROXY_LABEL_SELECTOR });
  sliceInformer.addEventHandler({
    onAdd: (s) => meta.onEndpointSliceUpdate(s as EndpointSlice, false),
    onUpdate: (_a, b) => meta.onEndpointSliceUpdate(b as EndpointSlice, false),
    onDelete: (s) => meta.onEndpointSliceUpdate(s as EndpointSlice, true),
  });
  const nodeInformer = factory.informerFor(nodes, { fieldSelector: `metadata.name=${nodeName}` });
  nodeInformer.addEventHandler({
    onAdd: (n) => meta.onNode(n as Node),
    onUpdate: (_a, b) => meta.onNode(b as Node),
    onDelete: () => meta.onNode(undefined),
  });
  const cidrWatch =
    o.mode === "nftables"
      ? await watchServiceCIDRs(client, factory, (cidrs) => meta.onServiceCIDRs(cidrs), logger)
      : undefined;
  factory.start(abort.signal);
  // As upstream, the first sync waits for Services, EndpointSlices and the Node, not for
  // ServiceCIDRs: a late list forces one more full sync instead.
  const started = Promise.all([
    serviceInformer.waitForSync(abort.signal),
    sliceInformer.waitForSync(abort.signal),
    nodeInformer.waitForSync(abort.signal),
  ]).then((synced) => {
    if (!synced.every(Boolean)) return;
    logger.info("caches synced, programming rules", { mode: o.mode, families });
    meta.start();
  });

  logger.info("started", {
    node: nodeName,
    mode: o.mode,
    families,
    nodeIPs: families.map((f) => nodeIPs[f]),
    serviceCIDRs: o.mode !== "nftables" ? "unused" : cidrWatch ? "watched" : "not served",
    metrics: servers.metricsAddress ?? "disabled",
    healthz: servers.healthzAddress ?? "disabled",
  });
  return {
    nodeName,
    metricsAddress: servers.metricsAddress,
    healthzAddress: servers.healthzAddress,
    meta,
    async stop() {
      abort.abort();
      await started;
      await meta.stop();
      await factory.stop();
      await serviceHealth.close();
      await servers.stop();
    },
  };
}
