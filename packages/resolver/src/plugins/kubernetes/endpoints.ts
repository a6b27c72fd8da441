import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

export interface EndpointPortInfo {
  name: string;
  protocol: string;
  /** -1 marks a slice without ports: its addresses answer A/AAAA but never SRV. */
  port: number;
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  /** targetRef.name, kept only when short enough to be a DNS label. */
  podName?: string;
}

/** One EndpointSlice reduced to what DNS needs: its ready addresses and its ports. */
export interface EndpointSubset {
  namespace: string;
  addresses: EndpointAddress[];
  ports: EndpointPortInfo[];
}

/**
 * Reduces a slice the way CoreDNS does: only endpoints whose `ready` condition is true or unset count
 * (serving and terminating are ignored), one address entry per address.
 */
export function toSubset(slice: EndpointSlice): EndpointSubset {
  const ports: EndpointPortInfo[] =
    slice.ports && slice.ports.length > 0
      ? slice.ports.map((p) => ({ name: p.name ?? "", protocol: p.protocol ?? "", port: p.port ?? -1 }))
      : [{ name: "", protocol: "", port: -1 }];
  const addresses: EndpointAddress[] = [];
  for (const ep of slice.endpoints ?? []) {
    if (ep.conditions?.ready === false) continue;
    for (const ip of ep.addresses) {
      const a: EndpointAddress = { ip };
      if (ep.hostname) a.hostname = ep.hostname;
      const pod = ep.targetRef?.name;
      if (pod && pod.length < 64) a.podName = pod;
      addresses.push(a);
    }
  }
  return { namespace: slice.metadata?.namespace ?? "", addresses, ports };
}

/**
 * The DNS label of an endpoint: its hostname, else (with endpoint_pod_names) its pod name, else its IP
 * with dashes (`10-0-0-1`, `fd00--1`; a v6 form ending in `-` gets a `0`).
 */
export function endpointHostname(addr: EndpointAddress, usePodNames: boolean): string {
  if (addr.hostname) return addr.hostname;
  if (usePodNames && addr.podName) return addr.podName;
  if (addr.ip.includes(".")) return addr.ip.replaceAll(".", "-");
  if (addr.ip.includes(":")) {
    const dashed = addr.ip.replaceAll(":", "-");
    return dashed.endsWith("-") ? `${dashed}0` : dashed;
  }
  return "";
}
