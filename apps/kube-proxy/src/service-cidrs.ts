// The ServiceCIDR watch (networking.k8s.io/v1), which only nftables mode consumes: every
// change hands the union of all objects' CIDRs to the proxiers. kube-proxy v1.37 starts this
// informer in every mode; we start it where it has a reader. An API server without the
// resource (before v1.33) gets one warning instead of a watch that fails forever.
import type { ServiceCIDR } from "@switchyard/basics";
import {
  defineResource,
  type InformerFactory,
  isNotFound,
  type Logger,
  type RestClient,
} from "@switchyard/kube";
import { allServiceCIDRs } from "@switchyard/proxier";

export const serviceCIDRs = defineResource<ServiceCIDR>({
  group: "networking.k8s.io",
  version: "v1",
  resource: "servicecidrs",
  kind: "ServiceCIDR",
  namespaced: false,
});

export interface ServiceCIDRWatch {
  /** Resolves true once the first list arrived; false when the watch is off or aborted. */
  waitForSync(signal: AbortSignal): Promise<boolean>;
}

/**
 * Registers the informer on `factory` (start the factory afterwards), or returns undefined
 * when the API server does not serve ServiceCIDRs.
 */
export async function watchServiceCIDRs(
  client: RestClient,
  factory: InformerFactory,
  onChange: (cidrs: string[]) => void,
  logger: Logger,
): Promise<ServiceCIDRWatch | undefined> {
  try {
    await client.list(serviceCIDRs, { limit: 1 });
  } catch (err) {
    if (isNotFound(err)) {
      logger.warn(
        "this API server serves no networking.k8s.io/v1 ServiceCIDRs; unallocated ClusterIPs are not dropped",
        {},
      );
      return undefined;
    }
    // Anything else (a timeout, a 403 from missing RBAC) is the informer's to retry and report.
  }
  const informer = factory.informerFor(serviceCIDRs);
  let last = "";
  const changed = () => {
    const cidrs = allServiceCIDRs(informer.list());
    const text = cidrs.join(",");
    if (text === last) return;
    last = text;
    onChange(cidrs);
  };
  informer.addEventHandler({ onAdd: changed, onUpdate: changed, onDelete: changed });
  return { waitForSync: (signal) => informer.waitForSync(signal) };
}
