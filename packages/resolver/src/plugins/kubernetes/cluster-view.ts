import type { Namespace, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { LabelSelector } from "./label-selector.js";

/**
 * The read-only slice of cluster state the kubernetes plugin answers from. An informer-backed
 * implementation lives with @switchyard/kube; tests use FixtureCluster. Implementations must not hand
 * out objects they will later mutate: the plugin treats everything it gets as frozen.
 */
export interface ClusterView {
  /** The Service `namespace/name`, if it exists. */
  service(namespace: string, name: string): Service | undefined;
  /** Services whose ClusterIP (any family) is `ip`. */
  servicesByClusterIP(ip: string): Service[];
  /** EndpointSlices labelled `kubernetes.io/service-name: name` in `namespace`. */
  endpointSlices(namespace: string, name: string): EndpointSlice[];
  /** EndpointSlices with an endpoint address equal to `ip`. */
  endpointSlicesByIP(ip: string): EndpointSlice[];
  namespace(name: string): Namespace | undefined;
  /** Pods whose status.podIPs include `ip`; only needed for `pods verified`. */
  podsByIP(ip: string): Pod[];
  /** Whether the initial list of every watched kind has been seen. */
  hasSynced(): boolean;
  /** Why not, one line per kind not synced yet ("endpointslices: list/watch failed: …"). */
  notSyncedReasons?(): string[];
  /** Unix seconds of the last change; the SOA serial. */
  modified(): number;
  /**
   * A number that moves on every change answers could depend on, in the same turn as the change. With
   * it the plugin keeps encoded replies until it moves; views without it are asked every time.
   */
  generation?(): number;
}

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";

/** The `labels` / `namespace_labels` selectors a FixtureCluster applies as the API server would. */
export interface FixtureSelectors {
  labels?: LabelSelector;
  namespaceLabels?: LabelSelector;
}

/** An in-memory ClusterView over plain objects, for tests and examples. */
export class FixtureCluster implements ClusterView {
  synced = true;
  lastModified = 1700000000;

  constructor(
    readonly objects: {
      services?: Service[];
      endpointSlices?: EndpointSlice[];
      namespaces?: string[];
      /** Labels of the namespaces above, for `namespace_labels`. */
      namespaceLabels?: Record<string, Record<string, string>>;
      pods?: Pod[];
    },
    readonly selectors: FixtureSelectors = {},
  ) {}

  private selected<T extends Service | EndpointSlice | Pod>(list: T[] | undefined): T[] {
    const sel = this.selectors.labels;
    return (list ?? []).filter((o) => !sel || sel.matches(o.metadata?.labels));
  }

  service(namespace: string, name: string): Service | undefined {
    return this.selected(this.objects.services).find(
      (s) => s.metadata?.namespace === namespace && s.metadata?.name === name,
    );
  }

  servicesByClusterIP(ip: string): Service[] {
    return this.selected(this.objects.services).filter((s) => clusterIPs(s).includes(ip));
  }

  endpointSlices(namespace: string, name: string): EndpointSlice[] {
    return this.selected(this.objects.endpointSlices).filter(
      (e) => e.metadata?.namespace === namespace && e.metadata?.labels?.[SERVICE_NAME_LABEL] === name,
    );
  }

  endpointSlicesByIP(ip: string): EndpointSlice[] {
    return this.selected(this.objects.endpointSlices).filter((e) =>
      e.endpoints.some((ep) => ep.addresses.includes(ip)),
    );
  }

  namespace(name: string): Namespace | undefined {
    if (!this.objects.namespaces?.includes(name)) return undefined;
    const labels = this.objects.namespaceLabels?.[name];
    const sel = this.selectors.namespaceLabels;
    if (sel && !sel.matches(labels)) return undefined;
    return { metadata: { name, ...(labels ? { labels } : {}) } };
  }

  podsByIP(ip: string): Pod[] {
    return this.selected(this.objects.pods).filter(
      (p) => p.status?.podIP === ip || (p.status?.podIPs ?? []).some((a) => a.ip === ip),
    );
  }

  hasSynced(): boolean {
    return this.synced;
  }

  modified(): number {
    return this.lastModified;
  }
}

/** A Service's ClusterIPs, `None` excluded; falls back to spec.clusterIP for old objects. */
export function clusterIPs(svc: Service): string[] {
  // By length, as CoreDNS does: an empty clusterIPs is no clusterIPs, not a Service without addresses.
  const ips = svc.spec?.clusterIPs?.length
    ? svc.spec.clusterIPs
    : svc.spec?.clusterIP
      ? [svc.spec.clusterIP]
      : [];
  return ips.filter((ip) => ip !== "" && ip !== "None");
}

export function isHeadless(svc: Service): boolean {
  return svc.spec?.clusterIP === "None";
}

export function isExternalName(svc: Service): boolean {
  return svc.spec?.type === "ExternalName";
}
