// What feeds the MetaProxier: Services and EndpointSlices (kube-proxy's label selector), this
// node's Node object and, in nftables mode, ServiceCIDRs. The first sync waits for the caches.
import {
  endpointSlices,
  type HttpRestClient,
  InformerFactory,
  type Logger,
  nodes,
  services,
} from "@switchyard/kube";
import { type IPFamily, type MetaProxier, PROXY_LABEL_SELECTOR, type ProxyMode } from "@switchyard/proxier";
import type { Node, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { type ServiceCIDRWatch, watchServiceCIDRs } from "./service-cidrs.js";

export interface ClusterWatchOptions {
  readonly client: HttpRestClient;
  readonly nodeName: string;
  readonly mode: ProxyMode;
  readonly families: readonly IPFamily[];
  readonly meta: MetaProxier;
  readonly logger: Logger;
}

export interface ClusterWatch {
  readonly factory: InformerFactory;
  /** Settles when the first sync has been started, or when the caches never synced before abort. */
  readonly started: Promise<void>;
  /** Undefined outside nftables mode and when the API server serves no ServiceCIDRs. */
  readonly serviceCIDRs: ServiceCIDRWatch | undefined;
}

/** Registers the informers, starts them, and starts `meta` once Services, slices and the Node synced. */
export async function watchCluster(o: ClusterWatchOptions, signal: AbortSignal): Promise<ClusterWatch> {
  const { meta, logger } = o;
  const factory = new InformerFactory({ client: o.client, logger });
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
  const nodeInformer = factory.informerFor(nodes, { fieldSelector: `metadata.name=${o.nodeName}` });
  nodeInformer.addEventHandler({
    onAdd: (n) => meta.onNode(n as Node),
    onUpdate: (_a, b) => meta.onNode(b as Node),
    onDelete: () => meta.onNode(undefined),
  });
  const serviceCIDRs =
    o.mode === "nftables"
      ? await watchServiceCIDRs(o.client, factory, (cidrs) => meta.onServiceCIDRs(cidrs), logger)
      : undefined;
  factory.start(signal);
  // As upstream, the first sync waits for Services, EndpointSlices and the Node, not for
  // ServiceCIDRs: a late list forces one more full sync instead.
  const started = Promise.all([
    serviceInformer.waitForSync(signal),
    sliceInformer.waitForSync(signal),
    nodeInformer.waitForSync(signal),
  ]).then((synced) => {
    if (!synced.every(Boolean)) return;
    logger.info("caches synced, programming rules", { mode: o.mode, families: o.families });
    meta.start();
  });
  return { factory, started, serviceCIDRs };
}
