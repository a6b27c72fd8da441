import type { AutoPathFunc } from "../../plugin/pkg/search-source.js";
import { matchZone } from "../../plugin/zones.js";
import type { ClusterView } from "./cluster-view.js";
import type { KubernetesOptions } from "./options.js";

/**
 * The search path of the pod that asked (what `autopath @kubernetes` walks), as a pod's resolv.conf
 * spells it: `NS.svc.ZONE`, `svc.ZONE`, `ZONE`, then the search list of this server's own resolv.conf,
 * then "" for the bare name. ZONE is the plugin zone the query falls in. There is no search path (no
 * autopath) outside the plugin's zones, without `pods verified`, and for a client that is no pod.
 */
export function kubernetesAutoPath(
  view: ClusterView,
  opts: KubernetesOptions,
  hostSearch: readonly string[],
): AutoPathFunc {
  return ({ name, remote }) => {
    const zone = matchZone(name, opts.zones);
    if (zone === undefined || opts.podMode !== "verified") return undefined;
    // CoreDNS indexes pods by status.podIP alone, so a second address of a dual-stack pod is no pod.
    const pod = view.podsByIP(remote.address).find((p) => p.status?.podIP === remote.address);
    const namespace = pod?.metadata?.namespace;
    if (namespace === undefined) return undefined;
    const own =
      zone === "." ? [`${namespace}.svc.`, "svc.", "."] : [`${namespace}.svc.${zone}`, `svc.${zone}`, zone];
    return [...own, ...hostSearch, ""];
  };
}
