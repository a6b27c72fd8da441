// One IP family's proxy: informer events go into the change trackers, the runner decides
// when to sync, and each sync renders (full or partial, as FullSyncPolicy says), applies
// through the backend, and reports to metrics, /healthz and the health-check NodePorts, then
// reconciles stale UDP conntrack entries when a UDP service's endpoints changed, and lets a backend that balances
// without NAT end its own stale flows (endStaleFlows: ebpf mode's connected UDP sockets). A failed
// sync is retried after syncPeriod and the retry is always full, since the trackers were
// already drained and the partial-sync bookkeeping is gone.

import type { IPFamily } from "@switchyard/basics";
import { backgroundClock, type Clock, type TimerHandle } from "@switchyard/kube";
import type { Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { cleanStaleEntries, DRAINED_ENTRY_SECONDS } from "../conntrack/clean-stale.js";
import type { ConntrackTable } from "../conntrack/conntrack.js";
import type { ProxyHealth } from "../healthcheck/proxy-health.js";
import type { ServiceHealthServer } from "../healthcheck/service-health.js";
import type { ProxyMetrics } from "../metrics/metrics.js";
import { recordQueued, recordSync } from "../metrics/record.js";
import {
  EndpointsChangeTracker,
  type EndpointsMap,
  localReadyEndpoints,
} from "../model/endpoints-change-tracker.js";
import { ServiceChangeTracker, type ServicePortMap } from "../model/service-change-tracker.js";
import { namespacedName } from "../model/service-port-name.js";
import { BoundedFrequencyRunner, kubeProxyRunnerIntervals } from "../sync/bounded-frequency-runner.js";
import { FullSyncPolicy } from "../sync/full-sync-policy.js";
import { type ProxierLogger, type ProxyBackend, silentLogger } from "./backend.js";
import { serviceCIDRsOfFamily } from "./service-cidrs.js";

export interface ProxierOptions {
  readonly nodeName: string;
  readonly backend: ProxyBackend;
  readonly metrics: ProxyMetrics;
  readonly health: ProxyHealth;
  /** healthCheckNodePorts; in dual-stack only one family's proxier serves them. */
  readonly serviceHealth?: ServiceHealthServer;
  /** Stale UDP flows are listed and deleted through it; unset skips conntrack cleanup. */
  readonly conntrack?: ConntrackTable;
  /**
   * Upstream's conntrack rule alone: UDP entries to a terminating endpoint stay until it stops serving. By default
   * finished exchanges with a terminating endpoint go once the rules no longer choose it (conntrack/reconcile.ts).
   */
  readonly keepFlowsToTerminating?: boolean;
  readonly minSyncPeriodMs: number;
  readonly syncPeriodMs: number;
  /** Time and the runner's timers; @switchyard/kube's backgroundClock by default. */
  readonly clock?: Clock;
  readonly logger?: ProxierLogger;
  /** Told after each sync that reached the kernel (kube-proxy's app removes other modes' rules after the first). */
  readonly onSynced?: () => void;
}

/** The maps a sync programmed. */
interface ProxyState {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
}

export class Proxier {
  readonly family: IPFamily;
  readonly #o: ProxierOptions;
  readonly #clock: Clock;
  readonly #log: ProxierLogger;
  readonly #services: ServiceChangeTracker;
  readonly #endpoints: EndpointsChangeTracker;
  readonly #policy = new FullSyncPolicy();
  readonly #runner: BoundedFrequencyRunner;
  #initialized = false;
  /** A sync is running; a full sync asked for now must survive its end. */
  #syncing = false;
  #fullSyncAskedDuringSync = false;
  #syncs = { ok: 0, failed: 0, full: 0 };
  /** The maps the last successful sync programmed: a conntrack round between syncs judges entries by them. */
  #programmed: ProxyState | undefined;
  /** A conntrack round is due to look again at entries to drained endpoints (#lookAgainSoon). */
  #drainTimer: TimerHandle | undefined;
  /** That round, while it runs: a sync waits for it, so no round judges the kernel's new rules by old maps. */
  #drainRound: Promise<void> | undefined;
  #stopped = false;

  constructor(options: ProxierOptions) {
    this.#o = options;
    this.family = options.backend.family;
    this.#clock = options.clock ?? backgroundClock;
    this.#log = options.logger ?? silentLogger;
    this.#services = new ServiceChangeTracker(this.family);
    this.#endpoints = new EndpointsChangeTracker({
      family: this.family,
      nodeName: options.nodeName,
      now: () => new Date(this.#clock.now()),
    });
    this.#runner = new BoundedFrequencyRunner({
      name: `sync-runner-${this.family}`,
      fn: () => this.#sync(),
      ...kubeProxyRunnerIntervals(options.minSyncPeriodMs, options.syncPeriodMs),
      clock: this.#clock,
      onError: (err) => this.#log.error("sync failed, retrying with a full sync", { error: err }),
    });
  }

  /** Counts of finished syncs, for logs and tests. */
  get syncs(): Readonly<{ ok: number; failed: number; full: number }> {
    return { ...this.#syncs };
  }

  onServiceUpdate(previous: Service | undefined, current: Service | undefined): void {
    if (this.#services.update(previous, current)) {
      this.#queued("service", this.#services.pendingCount());
    }
  }

  onEndpointSliceUpdate(slice: EndpointSlice, removed: boolean): void {
    if (this.#endpoints.endpointSliceUpdate(slice, removed)) {
      this.#queued("endpoints", this.#endpoints.pendingCount());
    }
  }

  /** The node's labels changed: topology may route differently, so rewrite everything. */
  onNodeLabels(labels: Readonly<Record<string, string>>): void {
    this.#o.backend.setNodeLabels(labels);
    this.#forceFullSync();
    if (this.#initialized) this.#request();
  }

  /**
   * The cluster's ServiceCIDRs (all families) changed. kube-proxy v1.37 only records them and
   * writes them at its next full sync, up to an hour later; we force that full sync now.
   */
  onServiceCIDRs(cidrs: readonly string[]): void {
    const setter = this.#o.backend.setServiceCIDRs;
    if (setter === undefined) return;
    const mine = serviceCIDRsOfFamily(cidrs, this.family);
    if (mine.invalid.length > 0) {
      this.#log.warn("ignoring ServiceCIDR entries that are not CIDRs", { cidrs: mine.invalid });
    }
    if (!setter.call(this.#o.backend, mine.cidrs)) return;
    this.#log.info("service CIDRs changed", { family: this.family, cidrs: mine.cidrs });
    this.#forceFullSync();
    if (this.#initialized) this.#request();
  }

  /** Starts syncing; call once the Service and EndpointSlice caches are complete. */
  start(): void {
    this.#initialized = true;
    this.#runner.start();
    this.#request();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#drainTimer !== undefined) this.#clock.clearTimeout(this.#drainTimer);
    this.#drainTimer = undefined;
    await this.#runner.stop();
    await this.#drainRound;
  }

  /**
   * The running sync may already have rendered with the old settings, and its end clears the
   * policy's flag; so a request made during a sync is renewed once that sync is done.
   */
  #forceFullSync(): void {
    this.#policy.forceFullSync();
    if (this.#syncing) this.#fullSyncAskedDuringSync = true;
  }

  #queued(kind: "service" | "endpoints", pending: number): void {
    recordQueued(this.#o.metrics, this.family, kind, this.#clock.now(), pending);
    // Before start-up the caches are partial; the first sync covers everything anyway.
    if (this.#initialized) this.#request();
  }

  #request(): void {
    this.#o.health.queuedUpdate(this.family);
    this.#runner.run();
  }

  async #sync(): Promise<void> {
    this.#syncing = true;
    try {
      await this.#drainRound;
      await this.#syncOnce();
    } finally {
      this.#syncing = false;
      if (this.#fullSyncAskedDuringSync) this.#policy.forceFullSync();
      this.#fullSyncAskedDuringSync = false;
    }
  }

  async #syncOnce(): Promise<void> {
    const start = this.#clock.now();
    const full = this.#policy.fullSyncDue(start);
    const svc = this.#services.apply();
    const eps = this.#endpoints.apply();
    this.#o.metrics.serviceChangesPending.set(0);
    this.#o.metrics.endpointChangesPending.set(0);
    for (const [service, problems] of svc.warnings) {
      this.#log.warn("skipping malformed parts of a Service", { service, family: this.family, problems });
    }
    const changed = new Set([...svc.updatedServices, ...eps.updatedServices]);
    const next = { services: svc.services, endpoints: eps.endpoints };
    let result: Awaited<ReturnType<ProxyBackend["sync"]>> | undefined;
    try {
      result = await this.#o.backend.sync({
        services: next.services,
        endpoints: next.endpoints,
        changedServices: full ? undefined : changed,
        ...(full ? {} : { changedServicePorts: svc.updatedPorts }),
        now: start,
      });
    } finally {
      const end = this.#clock.now();
      const fullSync = result?.fullSync ?? full;
      this.#policy.synced({ full: fullSync, ok: result !== undefined, now: start });
      if (result === undefined) this.#syncs.failed++;
      else {
        this.#syncs.ok++;
        if (fullSync) this.#syncs.full++;
      }
      recordSync(this.#o.metrics, {
        family: this.family,
        ok: result !== undefined,
        fullSync,
        startMs: start,
        endMs: end,
        triggerTimes: [...eps.lastChangeTriggerTimes.values()].flat(),
        noLocalEndpoints: result?.noLocalEndpoints,
      });
    }
    this.#o.health.updated(this.family);
    this.#o.onSynced?.();
    await this.#afterSync(next, eps.conntrackCleanupRequired);
  }

  /**
   * Best-effort follow-ups of a successful sync; their failures never fail the sync. Like
   * upstream, a failed sync skips them, and its conntrack cleanup flag is not carried over.
   */
  async #afterSync(after: ProxyState, conntrackCleanupRequired: boolean): Promise<void> {
    const health = this.#o.serviceHealth;
    if (health) {
      const ports = new Map<string, number>();
      for (const sp of after.services.values()) {
        if (sp.healthCheckNodePort > 0) {
          ports.set(namespacedName(sp.name.namespace, sp.name.name), sp.healthCheckNodePort);
        }
      }
      await health.syncServices(ports);
      health.syncEndpoints(localReadyEndpoints(after.endpoints));
    }
    const before = this.#programmed;
    this.#programmed = after;
    // Judged against the last state programmed, so a change a failed sync carried is not lost; before the
    // conntrack round, which waits on a listing, as these sockets wait on nothing else.
    if (before) await this.#endStaleFlows(before, after);
    if (conntrackCleanupRequired) await this.#reconcileConntrack(after);
  }

  async #endStaleFlows(before: ProxyState, after: ProxyState): Promise<void> {
    const backend = this.#o.backend;
    if (!backend.endStaleFlows) return;
    try {
      await backend.endStaleFlows(before, after);
    } catch (error) {
      this.#log.error("ending stale flows failed", { family: this.family, error });
    }
  }

  async #reconcileConntrack(state: ProxyState): Promise<void> {
    const table = this.#o.conntrack;
    if (!table) return;
    const r = await cleanStaleEntries({
      table,
      family: this.family,
      ...state,
      metrics: this.#o.metrics,
      clock: this.#clock,
      logger: this.#log,
      ...(this.#o.keepFlowsToTerminating ? {} : { drainTerminatingOn: this.#o.nodeName }),
    });
    if (r.drained > 0) this.#lookAgainSoon();
  }

  /**
   * Entries to drained endpoints can outlive the round that found them: a lookup through one renews its timeout,
   * and one still waiting for its reply was left alone. The next endpoint change may come only once the pod has
   * exited, too late for a lookup that meets such an entry then (CI saw one in a DNS roll with lameduck 5s). So a
   * round that found any is followed by another after DRAINED_ENTRY_SECONDS, until one finds none.
   */
  #lookAgainSoon(): void {
    if (this.#drainTimer !== undefined || this.#stopped) return;
    this.#drainTimer = this.#clock.setTimeout(() => {
      this.#drainTimer = undefined;
      const state = this.#programmed;
      // A sync under way runs its own round if it changed UDP endpoints; look again after it either way.
      if (this.#syncing) this.#lookAgainSoon();
      else if (state !== undefined) {
        this.#drainRound = this.#reconcileConntrack(state).finally(() => {
          this.#drainRound = undefined;
        });
      }
    }, DRAINED_ENTRY_SECONDS * 1000);
  }
}
