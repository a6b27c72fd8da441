// Dual-stack as kube-proxy's metaproxier does it: one Proxier per IP family, each with its
// own renderer and kernel table, fed the same events. Services go to both (each tracker
// keeps only its family's ClusterIP); EndpointSlices only to the family of their address type.
import type { Node, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { ProxyHealth } from "../healthcheck/proxy-health.js";
import type { Proxier } from "./proxier.js";

/**
 * kube-proxy's informers skip objects carrying either label: Services handled by another
 * proxy (service-proxy-name) and headless Services' slices.
 */
export const SERVICE_PROXY_NAME_LABEL = "service.kubernetes.io/service-proxy-name";
export const HEADLESS_LABEL = "service.kubernetes.io/headless";
export const PROXY_LABEL_SELECTOR = `!${SERVICE_PROXY_NAME_LABEL},!${HEADLESS_LABEL}`;

/** Whether kube-proxy handles an object with these labels (for sources without selectors). */
export function proxiedByUs(labels: Readonly<Record<string, string>> | undefined): boolean {
  return labels?.[SERVICE_PROXY_NAME_LABEL] === undefined && labels?.[HEADLESS_LABEL] === undefined;
}

export class MetaProxier {
  readonly proxiers: readonly Proxier[];
  readonly #health: ProxyHealth;
  /** The labels the proxiers last heard of; they start out knowing none. */
  #nodeLabels = "[]";

  constructor(proxiers: readonly Proxier[], health: ProxyHealth) {
    this.proxiers = proxiers;
    this.#health = health;
  }

  onServiceUpdate(previous: Service | undefined, current: Service | undefined): void {
    // A label added or removed turns the object into a delete or an add.
    const prev = previous && proxiedByUs(previous.metadata?.labels) ? previous : undefined;
    const cur = current && proxiedByUs(current.metadata?.labels) ? current : undefined;
    if (!prev && !cur) return;
    for (const p of this.proxiers) p.onServiceUpdate(prev, cur);
  }

  onEndpointSliceUpdate(slice: EndpointSlice, removed: boolean): void {
    const gone = removed || !proxiedByUs(slice.metadata?.labels);
    for (const p of this.proxiers) if (p.family === slice.addressType) p.onEndpointSliceUpdate(slice, gone);
  }

  /** This node's object changed (or appeared): health eligibility, and topology labels. */
  onNode(node: Node | undefined): void {
    this.#health.syncNode({
      deleting: node?.metadata?.deletionTimestamp !== undefined,
      taintKeys: (node?.spec?.taints ?? []).map((t) => t.key),
    });
    if (node === undefined) return;
    const labels = node.metadata?.labels ?? {};
    const text = JSON.stringify(Object.entries(labels).sort());
    if (text === this.#nodeLabels) return;
    this.#nodeLabels = text;
    for (const p of this.proxiers) p.onNodeLabels(labels);
  }

  /** Every CIDR of every ServiceCIDR object; each proxier keeps its own family's. */
  onServiceCIDRs(cidrs: readonly string[]): void {
    for (const p of this.proxiers) p.onServiceCIDRs(cidrs);
  }

  start(): void {
    for (const p of this.proxiers) p.start();
  }

  async stop(): Promise<void> {
    await Promise.all(this.proxiers.map((p) => p.stop()));
  }
}
