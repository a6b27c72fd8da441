// The program's one place of I/O wiring: the node's initialization (node-init.ts), then a
// Proxier per family, serve metrics and health, and feed the informers (informers.ts) into the proxiers.
import { realClock } from "@switchyard/kube";
import {
  ConntrackCLI,
  type Exec,
  httpHealthListen,
  type IPFamily,
  type IPTablesBackend,
  MetaProxier,
  type Nfacct,
  Proxier,
  ProxyHealth,
  type ProxyMetrics,
  platformCleanup,
  realExec,
  ServiceHealthServer,
} from "@switchyard/proxier";
import type { ResolvedOptions } from "./config/config.js";
import { cleanupTargets, createBackend, openEBPF, openNfacct } from "./dataplane.js";
import { withInjectedFaults } from "./faults.js";
import { watchCluster } from "./informers.js";
import { newAppMetrics } from "./metrics.js";
import { type InitOptions, initializeNode, type NodeInit, removeOtherModes } from "./node-init.js";
import { startServers } from "./servers.js";

export { nodeNameOf } from "./node-init.js";

export interface AppOptions extends InitOptions {
  readonly iptablesBackend?: IPTablesBackend;
  /** What /configz serves: the configuration as a v1alpha1 object (config/v1alpha1.ts). */
  readonly configz?: Record<string, unknown>;
  /** Upstream's conntrack rule alone (SWITCHYARD_PROXY_CONNTRACK=upstream); see Proxier's option of that name. */
  readonly keepFlowsToTerminating?: boolean;
}

export interface App {
  readonly nodeName: string;
  readonly metricsAddress: string | undefined;
  readonly healthzAddress: string | undefined;
  readonly meta: MetaProxier;
  stop(): Promise<void>;
}

/** --cleanup: every mode's rules go (ebpf mode's pins under `bpfRoot`, "" for the default), then the caller exits. */
export async function cleanupAndExit(exec: Exec = realExec, bpfRoot = ""): Promise<void> {
  await platformCleanup(cleanupTargets(withInjectedFaults(exec), bpfRoot), "nftables", true);
}

/** --init-only: the privileged steps of a start (node-init.ts), then the caller exits 0. */
export async function initOnlyAndExit(o: ResolvedOptions, opts: InitOptions): Promise<void> {
  await initializeNode(o, { ...opts, cleanupBeforeFirstSync: true });
  opts.logger.info("System initialized and --init-only specified");
}

export async function startApp(o: ResolvedOptions, opts: AppOptions): Promise<App> {
  const { logger } = opts;
  const init = await initializeNode(o, opts);
  const { nodeName, client, info, families, nodeIPs } = init;
  // iptables mode counts two kinds of packets in nfacct objects, read back on each scrape (upstream's collectors).
  const nfacct = o.mode === "iptables" ? await openNfacct(init.exec, logger) : undefined;
  const metrics = newAppMetrics(o.mode, nfacct, logger);
  const health = newProxyHealth(o, metrics);
  const serviceHealth = new ServiceHealthServer({
    listen: httpHealthListen(),
    proxyHealthy: () => health.isHealthy(),
    onListenError: (service, port, error) =>
      logger.warn("cannot serve a healthCheckNodePort", { service, port, error }),
  });
  const cleanup = cleanupAfterFirstSyncs(o, opts, init);
  const proxiers = await createProxiers(o, opts, init, {
    metrics,
    nfacct,
    health,
    serviceHealth,
    onSynced: cleanup.onSynced,
  });
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
  const watch = await watchCluster({ client, nodeName, mode: o.mode, families, meta, logger }, abort.signal);

  logger.info("started", {
    node: nodeName,
    mode: o.mode,
    families,
    nodeIPs: families.map((f) => nodeIPs[f]),
    serviceCIDRs: o.mode !== "nftables" ? "unused" : watch.serviceCIDRs ? "watched" : "not served",
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
      await watch.started;
      await meta.stop();
      await cleanup.done();
      await watch.factory.stop();
      await serviceHealth.close();
      await servers.stop();
    },
  };
}

/** /healthz and /livez, which also count their responses by status code. */
function newProxyHealth(o: ResolvedOptions, metrics: ProxyMetrics): ProxyHealth {
  return new ProxyHealth({
    clock: realClock,
    healthTimeoutMs: 2 * o.syncPeriodMs,
    onResponse: (path, status) =>
      (path === "/healthz" ? metrics.proxyHealthzTotal : metrics.proxyLivezTotal).inc({
        code: String(status),
      }),
  });
}

interface SharedByProxiers {
  readonly metrics: ProxyMetrics;
  readonly nfacct: Nfacct | undefined;
  readonly health: ProxyHealth;
  readonly serviceHealth: ServiceHealthServer;
  readonly onSynced: (family: IPFamily) => void;
}

/**
 * The other modes' rules go once every family's proxier has synced, so the node keeps the old mode's Service
 * rules until the new mode's are in the kernel (both can be installed at once; the new ones never need the old).
 * Upstream removes them before the first sync, leaving a window with no Service rules at all; that order
 * stays available (node-init.ts).
 */
function cleanupAfterFirstSyncs(o: ResolvedOptions, opts: AppOptions, init: NodeInit) {
  const waiting = new Set<IPFamily>(opts.cleanupBeforeFirstSync ? [] : init.families);
  let running: Promise<void> = Promise.resolve();
  return {
    onSynced(family: IPFamily) {
      if (!waiting.delete(family) || waiting.size > 0) return;
      running = removeOtherModes(init.exec, o.mode, opts.logger, o.ebpf.bpfRoot).then(() =>
        opts.logger.info("removed other proxy modes' rules after the first sync", { mode: o.mode }),
      );
    },
    done: () => running,
  };
}

/** One Proxier per IP family, primary family first, each over its mode's backend. */
async function createProxiers(
  o: ResolvedOptions,
  opts: AppOptions,
  init: NodeInit,
  { metrics, nfacct, health, serviceHealth, onSynced }: SharedByProxiers,
): Promise<Proxier[]> {
  const { exec, nodeName, info, nodeIPs, kernel } = init;
  const bpf = o.mode === "ebpf" ? await openEBPF(o, init.families, nodeIPs, exec, opts.logger) : undefined;
  const proxiers: Proxier[] = [];
  for (const [i, family] of init.families.entries()) {
    const flog = opts.logger.child({ ipFamily: family });
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
        ...(nfacct ? { nfacct } : {}),
        ...(bpf ? { bpfMaps: bpf.maps } : {}),
        ...(bpf?.sockets ? { bpfSockets: bpf.sockets } : {}),
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
        keepFlowsToTerminating: opts.keepFlowsToTerminating ?? false,
        minSyncPeriodMs: o.minSyncPeriodMs,
        syncPeriodMs: o.syncPeriodMs,
        logger: flog,
        onSynced: () => onSynced(family),
      }),
    );
  }
  return proxiers;
}
