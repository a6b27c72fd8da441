import {
  byServiceName,
  endpointSlices,
  type Informer,
  InformerFactory,
  indexNames,
  type KubeObject,
  type Logger,
  namespaces,
  pods,
  type RestClient,
  services,
} from "@switchyard/kube";
import type { Namespace, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { Metrics } from "../../../metrics/metrics.js";
import type { ClusterView } from "../cluster-view.js";
import { clusterIPs, SERVICE_NAME_LABEL } from "../cluster-view.js";
import { ProgrammingLatency } from "./programming-latency.js";
import { slimEndpointSlice, slimNamespace, slimPod, slimService } from "./slim.js";

export interface KubeClusterViewOptions {
  client: RestClient;
  /** Watch every pod (`pods verified`); costly, so off unless asked for. */
  pods?: boolean;
  /** false with `noendpoints`: EndpointSlices are not watched at all. */
  endpoints?: boolean;
  /** `labels`: a canonical selector sent with every list/watch of Services, EndpointSlices and Pods. */
  labelSelector?: string;
  /** `namespace_labels`: sent with the Namespace list/watch, so other namespaces never exist here. */
  namespaceLabelSelector?: string;
  metrics?: Metrics;
  logger?: Logger;
  /** Wall-clock milliseconds; the SOA serial and the programming latency come from it. */
  now?: () => number;
  /** Called once the informers have stopped, e.g. to close the HTTP agent. */
  onStop?: () => void;
}

const BY_CLUSTER_IP = "cluster-ip";
const BY_ENDPOINT_IP = "endpoint-ip";
const BY_POD_IP = "pod-ip";

/**
 * The cluster as the kubernetes plugin sees it, kept by informers: Services, EndpointSlices and
 * Namespaces always, Pods only for `pods verified`. Cached objects are slim and frozen.
 */
export class KubeClusterView implements ClusterView {
  private readonly factory: InformerFactory;
  private readonly services: Informer<Service>;
  private readonly namespaces: Informer<Namespace>;
  private readonly slices: Informer<EndpointSlice> | undefined;
  private readonly pods: Informer<Pod> | undefined;
  private readonly now: () => number;
  private readonly abort = new AbortController();
  private lastModified: number;
  /** Counts every event of every informer (namespaces too: they decide which names exist). */
  private changes = 0;

  constructor(private readonly options: KubeClusterViewOptions) {
    this.now = options.now ?? Date.now;
    this.lastModified = Math.floor(this.now() / 1000);
    this.factory = new InformerFactory({
      client: options.client,
      ...(options.logger ? { logger: options.logger } : {}),
    });
    // Each informer slims its objects as it stores them: an object a slimmer cannot take is skipped and
    // logged by the informer, and the rest keep serving.
    // The API server filters, as for CoreDNS: objects outside the selectors never reach the cache.
    const selected = options.labelSelector ? { labelSelector: options.labelSelector } : {};
    this.services = this.factory.informerFor(services, {
      ...selected,
      transform: slimService,
      indexers: { [BY_CLUSTER_IP]: (svc) => clusterIPs(svc) },
    });
    this.namespaces = this.factory.informerFor(namespaces, {
      transform: slimNamespace,
      ...(options.namespaceLabelSelector ? { labelSelector: options.namespaceLabelSelector } : {}),
    });
    if (options.endpoints !== false) {
      this.slices = this.factory.informerFor(endpointSlices, {
        ...selected,
        transform: slimEndpointSlice,
        indexers: {
          [indexNames.serviceName]: byServiceName as (s: EndpointSlice) => string[],
          [BY_ENDPOINT_IP]: (s) => s.endpoints.flatMap((ep) => ep.addresses),
        },
      });
    }
    if (options.pods) {
      this.pods = this.factory.informerFor(pods, {
        ...selected,
        transform: slimPod,
        indexers: {
          [BY_POD_IP]: (p) => [
            ...new Set([
              ...(p.status?.podIP ? [p.status.podIP] : []),
              ...(p.status?.podIPs ?? []).flatMap((a) => (a.ip ? [a.ip] : [])),
            ]),
          ],
        },
      });
    }
    this.watchChanges();
  }

  /** Starts list/watch in the background. */
  start(): void {
    this.factory.start(this.abort.signal);
  }

  /** Resolves true once every informer has synced, false if `timeoutMs` passes (or the view stops) first. */
  async waitForSync(timeoutMs: number): Promise<boolean> {
    const give = new AbortController();
    const timer = setTimeout(() => give.abort(), timeoutMs);
    const stopped = () => give.abort();
    this.abort.signal.addEventListener("abort", stopped, { once: true });
    try {
      return await this.factory.waitForCacheSync(give.signal);
    } finally {
      clearTimeout(timer);
      this.abort.signal.removeEventListener("abort", stopped);
    }
  }

  async stop(): Promise<void> {
    this.abort.abort();
    await this.factory.stop();
    this.options.onStop?.();
  }

  service(namespace: string, name: string): Service | undefined {
    return this.services.get(namespace, name);
  }

  servicesByClusterIP(ip: string): Service[] {
    return this.services.byIndex(BY_CLUSTER_IP, ip);
  }

  endpointSlices(namespace: string, name: string): EndpointSlice[] {
    return this.slices?.byIndex(indexNames.serviceName, `${namespace}/${name}`) ?? [];
  }

  endpointSlicesByIP(ip: string): EndpointSlice[] {
    return this.slices?.byIndex(BY_ENDPOINT_IP, ip) ?? [];
  }

  namespace(name: string): Namespace | undefined {
    return this.namespaces.get(undefined, name);
  }

  podsByIP(ip: string): Pod[] {
    return this.pods?.byIndex(BY_POD_IP, ip) ?? [];
  }

  hasSynced(): boolean {
    return this.factory.hasSynced();
  }

  notSyncedReasons(): string[] {
    return this.factory.notSynced();
  }

  modified(): number {
    return this.lastModified;
  }

  generation(): number {
    return this.changes;
  }

  /** Every change to what answers depend on moves the SOA serial; slices also feed the latency metric. */
  private watchChanges(): void {
    const touch = () => {
      this.lastModified = Math.floor(this.now() / 1000);
      this.changes++;
    };
    const touching = { onAdd: touch, onUpdate: touch, onDelete: touch };
    const counted = () => {
      this.changes++;
    };
    this.namespaces.addEventHandler({ onAdd: counted, onUpdate: counted, onDelete: counted });
    this.services.addEventHandler(touching);
    this.pods?.addEventHandler(touching);
    const slices = this.slices;
    if (!slices) return;
    const latency = this.options.metrics ? new ProgrammingLatency(this.options.metrics, this.now) : undefined;
    const record = (slice: KubeObject) => {
      touch();
      // The first list replays history, not changes this server was waiting for.
      if (!latency || !slices.hasSynced()) return;
      const s = slice as EndpointSlice;
      const owner = s.metadata?.labels?.[SERVICE_NAME_LABEL];
      latency.record(s, owner ? this.service(s.metadata?.namespace ?? "", owner) : undefined);
    };
    slices.addEventHandler({ onAdd: record, onUpdate: (_old, next) => record(next), onDelete: record });
  }
}
