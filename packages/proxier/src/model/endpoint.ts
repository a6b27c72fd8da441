// One backend of one Service port, as the proxy sees it.
import {
  type EndpointSlice,
  formatIP,
  hostPort,
  type IPFamily,
  parseIP,
  type Endpoint as SliceEndpoint,
} from "@switchyard/basics";
import { isProtocol, type Protocol, type ServicePortName, servicePortKey } from "./service-port-name.js";

export interface EndpointInfo {
  readonly ip: string;
  readonly port: number;
  /** Ready: usable for new connections. A missing condition counts as true. */
  readonly ready: boolean;
  /** Serving: answering, possibly while terminating. A missing condition takes `ready`'s value. */
  readonly serving: boolean;
  readonly terminating: boolean;
  readonly nodeName: string;
  readonly zone: string;
  /** The endpoint runs on this proxy's node. */
  readonly isLocal: boolean;
  readonly zoneHints: readonly string[];
  readonly nodeHints: readonly string[];
}

/** "ip:port", with the IPv6 address in brackets, as Go's net.JoinHostPort writes it. */
export function endpointString(ep: Pick<EndpointInfo, "ip" | "port">): string {
  return hostPort(ep.ip, ep.port);
}

/** Endpoints of each Service port (keyed by servicePortKey), sorted by endpointString. */
export type EndpointsByPort = Map<string, EndpointInfo[]>;

function endpointInfo(ep: SliceEndpoint, ip: string, port: number, nodeName: string): EndpointInfo {
  const ready = ep.conditions?.ready ?? true;
  const hints = ep.hints;
  return {
    ip,
    port,
    ready,
    serving: ep.conditions?.serving ?? ready,
    terminating: ep.conditions?.terminating ?? false,
    nodeName: ep.nodeName ?? "",
    zone: ep.zone ?? "",
    isLocal: nodeName !== "" && ep.nodeName === nodeName,
    zoneHints: (hints?.forZones ?? []).map((z) => z.name),
    nodeHints: (hints?.forNodes ?? []).map((n) => n.name),
  };
}

function addressFamilyOf(slice: EndpointSlice): IPFamily | null {
  if (slice.addressType === "IPv4") return "IPv4";
  if (slice.addressType === "IPv6") return "IPv6";
  return null;
}

/**
 * Endpoints of one Service's slices for `family`, keyed by service port. Slices are read in
 * name order; an ip:port that several slices list is kept once, preferring a ready copy.
 */
export function endpointsFromSlices(
  namespace: string,
  service: string,
  slices: readonly EndpointSlice[],
  family: IPFamily,
  nodeName: string,
): EndpointsByPort {
  const byPort = new Map<string, Map<string, EndpointInfo>>();
  const ordered = [...slices].sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""));
  for (const slice of ordered) {
    if (addressFamilyOf(slice) !== family) continue;
    for (const port of slice.ports ?? []) {
      if (port.port === undefined || !isProtocol(port.protocol ?? "TCP")) continue;
      const spn: ServicePortName = {
        namespace,
        name: service,
        port: port.name ?? "",
        protocol: (port.protocol ?? "TCP") as Protocol,
      };
      const key = servicePortKey(spn);
      const seen = byPort.get(key) ?? new Map<string, EndpointInfo>();
      byPort.set(key, seen);
      // An EndpointSlice with ports and no endpoints comes back from the apiserver without `endpoints`.
      for (const ep of slice.endpoints ?? []) {
        const parsed = parseIP(ep.addresses[0] ?? "");
        if (!parsed || parsed.family !== family) continue;
        const info = endpointInfo(ep, formatIP(parsed), port.port, nodeName);
        const id = endpointString(info);
        const prior = seen.get(id);
        if (!prior || (!prior.ready && info.ready)) seen.set(id, info);
      }
    }
  }
  const out: EndpointsByPort = new Map();
  for (const [key, seen] of byPort) {
    const list = [...seen.values()].sort((a, b) => compareStrings(endpointString(a), endpointString(b)));
    if (list.length > 0) out.set(key, list);
  }
  return out;
}

/** Byte-wise comparison, like Go's string ordering (not locale-aware). */
export function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
