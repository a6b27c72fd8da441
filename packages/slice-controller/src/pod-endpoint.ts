import { formatIP, parseIP } from "@switchyard/basics";
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import { LABEL_TOPOLOGY_ZONE } from "./constants.js";
import type { AddressType, Endpoint } from "./types.js";

/** True when the Pod's Ready condition is True. This is the endpoint's `serving` condition. */
export function isPodReady(pod: Pod): boolean {
  return pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
}

/**
 * Whether a Pod belongs in any EndpointSlice. Finished Pods and Pods without an IP are left out;
 * terminating Pods stay in, so proxies can keep serving from them while they drain.
 */
export function shouldPodBeInEndpoints(pod: Pod): boolean {
  const phase = pod.status?.phase;
  if (phase === "Succeeded" || phase === "Failed") return false;
  const hasIP = Boolean(pod.status?.podIP) || (pod.status?.podIPs?.length ?? 0) > 0;
  return hasIP;
}

/** The per-Pod DNS name is published only for Pods that opted into this Service's subdomain. */
export function shouldSetHostname(pod: Pod, service: Service): boolean {
  const hostname = pod.spec?.hostname ?? "";
  return (
    hostname.length > 0 &&
    (pod.spec?.subdomain ?? "") === (service.metadata?.name ?? "") &&
    (pod.metadata?.namespace ?? "") === (service.metadata?.namespace ?? "")
  );
}

/** The Pod's addresses of one family, canonicalised. Only status.podIPs is read, as upstream does. */
export function podAddresses(pod: Pod, addressType: AddressType): string[] {
  const addresses: string[] = [];
  for (const podIP of pod.status?.podIPs ?? []) {
    const parsed = parseIP(podIP.ip ?? "");
    // The apiserver validates pod IPs, so an unparsable one is dropped rather than published.
    if (parsed?.family === addressType) addresses.push(formatIP(parsed));
  }
  return addresses;
}

/**
 * Builds the endpoint a Pod contributes to a slice of `addressType`. `node` may be undefined when
 * the Node is unknown; the endpoint then has no zone.
 */
export function podToEndpoint(
  pod: Pod,
  node: Node | undefined,
  service: Service,
  addressType: AddressType,
): Endpoint {
  const serving = isPodReady(pod);
  const terminating = pod.metadata?.deletionTimestamp != null;
  // Ready is never true while terminating, unless the Service publishes not-ready addresses anyway.
  const ready = (service.spec?.publishNotReadyAddresses ?? false) || (serving && !terminating);
  const endpoint: Endpoint = {
    addresses: podAddresses(pod, addressType),
    conditions: { ready, serving, terminating },
    targetRef: {
      kind: "Pod",
      namespace: pod.metadata?.namespace ?? "",
      name: pod.metadata?.name ?? "",
      uid: pod.metadata?.uid ?? "",
    },
  };
  const nodeName = pod.spec?.nodeName ?? "";
  if (nodeName !== "") endpoint.nodeName = nodeName;
  const zone = node?.metadata?.labels?.[LABEL_TOPOLOGY_ZONE] ?? "";
  if (zone !== "") endpoint.zone = zone;
  if (shouldSetHostname(pod, service)) endpoint.hostname = pod.spec?.hostname ?? "";
  return endpoint;
}
