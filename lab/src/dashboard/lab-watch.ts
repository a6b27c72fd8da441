import {
  byServiceName,
  configMaps,
  discardLogger,
  endpointSlices,
  InformerFactory,
  indexNames,
  nodes,
  pods,
  type RestClient,
  services,
} from "@switchyard/kube";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { alive } from "../lock.js";
import { readMigrationProgress } from "../migrate/progress-file.js";
import type { LabObjects } from "./dashboard-core.js";
import { countEndpoints } from "./services-view.js";
import type { EndpointCounts } from "./view-model.js";

export interface LabWatch {
  /** The watched objects now, and the migration's progress file as it is now. */
  objects(): LabObjects;
  /** Nodes' names, for the scrapes. */
  nodeNames(): string[];
  dnsPods: () => LabObjects["dnsPods"];
  /** Resolves true once every informer has listed, false if `signal` aborts first. */
  synced(signal: AbortSignal): Promise<boolean>;
  stop(): Promise<void>;
}

export interface LabWatchHandlers {
  /** A Service's slices changed ("namespace/name"), with its endpoint counts now. */
  endpoints(service: string, counts: EndpointCounts): void;
  /** Anything watched changed. */
  changed(): void;
}

/**
 * Informers on what the page shows: Nodes, Services, EndpointSlices (indexed by Service), the kube-dns pods and
 * the coredns ConfigMap (its Corefile has the lameduck). They run until stop().
 */
export function watchLab(client: RestClient, stateDir: string, on: LabWatchHandlers): LabWatch {
  const abort = new AbortController();
  const factory = new InformerFactory({ client, logger: discardLogger });
  const nodeInformer = factory.informerFor(nodes);
  const serviceInformer = factory.informerFor(services);
  const sliceInformer = factory.informerFor(endpointSlices, {
    indexers: { [indexNames.serviceName]: byServiceName },
  });
  const dnsInformer = factory.informerFor(pods, { labelSelector: "k8s-app=kube-dns" });
  const corefileInformer = factory.informerFor(configMaps, { fieldSelector: "metadata.name=coredns" });

  const onSlice = (slice: EndpointSlice) => {
    const [key] = byServiceName(slice);
    if (key) on.endpoints(key, countEndpoints(sliceInformer.byIndex(indexNames.serviceName, key)));
    on.changed();
  };
  sliceInformer.addEventHandler({ onAdd: onSlice, onUpdate: (_, s) => onSlice(s), onDelete: onSlice });
  const changed = () => on.changed();
  for (const informer of [nodeInformer, serviceInformer, dnsInformer, corefileInformer])
    informer.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
  factory.start(abort.signal);

  const dnsPods = () => dnsInformer.list("kube-system");
  return {
    objects: () => {
      const progress = readMigrationProgress(stateDir);
      return {
        nodes: nodeInformer.list(),
        services: serviceInformer.list(),
        slices: sliceInformer.list(),
        dnsPods: dnsPods(),
        corefile: corefileInformer.get("kube-system", "coredns")?.data?.Corefile ?? "",
        ...(progress ? { migration: { progress, alive: alive(progress.pid) } } : {}),
        notSynced: factory.notSynced(),
      };
    },
    nodeNames: () => nodeInformer.list().map((n) => n.metadata?.name ?? ""),
    dnsPods,
    synced: (signal) => factory.waitForCacheSync(signal),
    stop: async () => {
      abort.abort();
      await factory.stop();
    },
  };
}
