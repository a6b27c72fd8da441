import type { Lister } from "@switchyard/kube";
import type { Pod, Service } from "kubernetes-types/core/v1.js";
import { selectorMatches } from "./selector.js";

/** Keys ("namespace/name") of the selector Services in the Pod's namespace that select it. */
export function servicesSelecting(services: Lister<Service>, pod: Pod): string[] {
  const namespace = pod.metadata?.namespace ?? "";
  const keys: string[] = [];
  for (const service of services.list(namespace)) {
    const selector = service.spec?.selector;
    if (selector == null || !selectorMatches(selector, pod.metadata?.labels)) continue;
    keys.push(`${namespace}/${service.metadata?.name ?? ""}`);
  }
  return keys;
}

const readyOf = (pod: Pod) => pod.status?.conditions?.find((c) => c.type === "Ready");

/**
 * Whether a Pod update can change any endpoint built from it. Status writes that touch only other
 * conditions or container states are frequent, and skipping them spares a sync per kubelet heartbeat.
 */
export function podEndpointChanged(oldPod: Pod, newPod: Pod): boolean {
  const o = oldPod;
  const n = newPod;
  const ips = (p: Pod) => (p.status?.podIPs ?? []).map((ip) => ip.ip).join(",") || (p.status?.podIP ?? "");
  return (
    (o.metadata?.deletionTimestamp ?? "") !== (n.metadata?.deletionTimestamp ?? "") ||
    ips(o) !== ips(n) ||
    o.status?.phase !== n.status?.phase ||
    readyOf(o)?.status !== readyOf(n)?.status ||
    o.spec?.nodeName !== n.spec?.nodeName ||
    o.spec?.hostname !== n.spec?.hostname ||
    o.spec?.subdomain !== n.spec?.subdomain ||
    JSON.stringify(o.spec?.containers?.map((c) => c.ports)) !==
      JSON.stringify(n.spec?.containers?.map((c) => c.ports)) ||
    JSON.stringify(o.spec?.initContainers?.map((c) => c.ports)) !==
      JSON.stringify(n.spec?.initContainers?.map((c) => c.ports))
  );
}

function sameLabels(a: Pod, b: Pod): boolean {
  return JSON.stringify(a.metadata?.labels ?? {}) === JSON.stringify(b.metadata?.labels ?? {});
}

/**
 * The Services to sync after a Pod update: with new labels, those that selected it before or select
 * it now; otherwise those selecting it, and only if an endpoint could have changed.
 */
export function servicesForPodUpdate(services: Lister<Service>, oldPod: Pod, newPod: Pod): string[] {
  if (oldPod.metadata?.resourceVersion === newPod.metadata?.resourceVersion) return [];
  if (!sameLabels(oldPod, newPod)) {
    return [...new Set([...servicesSelecting(services, oldPod), ...servicesSelecting(services, newPod)])];
  }
  return podEndpointChanged(oldPod, newPod) ? servicesSelecting(services, newPod) : [];
}
