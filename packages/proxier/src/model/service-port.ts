// What the proxy needs to know about one Service port, computed once per Service change.

import { cidrContains, formatCIDR, formatIP, type IPFamily, parseCIDR, parseIP } from "@switchyard/basics";
import type { Service, ServicePort } from "kubernetes-types/core/v1.js";
import { isProtocol, type Protocol, type ServicePortName } from "./service-port-name.js";

/** Default ClientIP affinity timeout (3 hours), as the API server defaults it. */
export const DEFAULT_STICKY_MAX_AGE_SECONDS = 10800;

export interface ServicePortInfo {
  readonly name: ServicePortName;
  readonly clusterIP: string;
  readonly port: number;
  readonly protocol: Protocol;
  /** 0 when the port has no NodePort. */
  readonly nodePort: number;
  /** External IPs of this proxier's IP family, canonical text. */
  readonly externalIPs: readonly string[];
  /** LoadBalancer ingress IPs in VIP mode, of this family. */
  readonly loadBalancerVIPs: readonly string[];
  /** Masked CIDRs of this family, whitespace trimmed. */
  readonly loadBalancerSourceRanges: readonly string[];
  /** 0 unless externalTrafficPolicy is Local on an externally accessible Service. */
  readonly healthCheckNodePort: number;
  /** 0 when session affinity is None; the ClientIP timeout otherwise. */
  readonly stickyMaxAgeSeconds: number;
  readonly externalPolicyLocal: boolean;
  readonly internalPolicyLocal: boolean;
}

export interface ServicePortsResult {
  readonly ports: ServicePortInfo[];
  /** Human-readable reasons for fields that were skipped; the rest of the Service is kept. */
  readonly warnings: string[];
}

/** NodePort, LoadBalancer, or a ClusterIP Service that has external IPs. */
function serviceExternallyAccessible(svc: Service): boolean {
  const type = svc.spec?.type ?? "ClusterIP";
  return (
    type === "LoadBalancer" ||
    type === "NodePort" ||
    (type === "ClusterIP" && (svc.spec?.externalIPs ?? []).length > 0)
  );
}

/** Services without a virtual IP are not proxied at all. */
export function shouldSkipService(svc: Service): boolean {
  const ip = svc.spec?.clusterIP ?? "";
  return ip === "" || ip === "None" || svc.spec?.type === "ExternalName";
}

function clusterIPForFamily(svc: Service, family: IPFamily): string | null {
  const candidates = svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : [svc.spec?.clusterIP ?? ""];
  for (const text of candidates) {
    const ip = parseIP(text);
    if (ip?.family === family) return formatIP(ip);
  }
  return null;
}

function ipsOfFamily(texts: readonly string[], family: IPFamily, what: string, warnings: string[]): string[] {
  const out: string[] = [];
  for (const text of texts) {
    const ip = parseIP(text);
    if (!ip) warnings.push(`${what} ${JSON.stringify(text)} is not a valid IP, skipped`);
    else if (ip.family === family) out.push(formatIP(ip));
  }
  return out;
}

function sharedFields(svc: Service, family: IPFamily, warnings: string[]) {
  const spec = svc.spec ?? {};
  const externalIPs = ipsOfFamily(spec.externalIPs ?? [], family, "externalIP", warnings);
  const vipIngress = (svc.status?.loadBalancer?.ingress ?? []).filter(
    // Proxy-mode load balancers deliver traffic to the node, not to the VIP.
    (ing) => ing.ip && (ing.ipMode === undefined || ing.ipMode === "VIP"),
  );
  const loadBalancerVIPs = ipsOfFamily(
    vipIngress.map((ing) => ing.ip ?? ""),
    family,
    "load balancer ingress IP",
    warnings,
  );
  const loadBalancerSourceRanges: string[] = [];
  for (const text of spec.loadBalancerSourceRanges ?? []) {
    const cidr = parseCIDR(text);
    if (!cidr) warnings.push(`loadBalancerSourceRange ${JSON.stringify(text)} is not a valid CIDR, skipped`);
    else if (cidr.ip.family === family) loadBalancerSourceRanges.push(formatCIDR(cidr));
  }
  let stickyMaxAgeSeconds = 0;
  if (spec.sessionAffinity === "ClientIP") {
    const timeout = spec.sessionAffinityConfig?.clientIP?.timeoutSeconds;
    stickyMaxAgeSeconds = timeout !== undefined && timeout > 0 ? timeout : DEFAULT_STICKY_MAX_AGE_SECONDS;
  }
  const accessible = serviceExternallyAccessible(svc);
  const externalPolicyLocal = accessible && spec.externalTrafficPolicy === "Local";
  return {
    externalIPs,
    loadBalancerVIPs,
    loadBalancerSourceRanges,
    stickyMaxAgeSeconds,
    externalPolicyLocal,
    internalPolicyLocal: spec.internalTrafficPolicy === "Local",
    healthCheckNodePort: externalPolicyLocal ? (spec.healthCheckNodePort ?? 0) : 0,
  };
}

function portInfo(
  svc: Service,
  port: ServicePort,
  clusterIP: string,
  shared: ReturnType<typeof sharedFields>,
): ServicePortInfo {
  const protocol = port.protocol as Protocol;
  return {
    name: {
      namespace: svc.metadata?.namespace ?? "",
      name: svc.metadata?.name ?? "",
      port: port.name ?? "",
      protocol,
    },
    clusterIP,
    port: port.port,
    protocol,
    nodePort: port.nodePort ?? 0,
    ...shared,
  };
}

/**
 * The ports of `svc` that a proxier for `family` handles. A Service without a ClusterIP of
 * this family yields no ports; a malformed field is dropped with a warning.
 */
export function servicePortsFromService(svc: Service, family: IPFamily): ServicePortsResult {
  const warnings: string[] = [];
  if (shouldSkipService(svc)) return { ports: [], warnings };
  const clusterIP = clusterIPForFamily(svc, family);
  if (clusterIP === null) {
    // Another family's ClusterIP is normal; no parseable ClusterIP at all is a broken Service.
    const texts = svc.spec?.clusterIPs?.length ? svc.spec.clusterIPs : [svc.spec?.clusterIP ?? ""];
    if (texts.every((t) => parseIP(t) === null)) {
      warnings.push(`clusterIP ${JSON.stringify(texts.join(","))} is not a valid IP, Service skipped`);
    }
    return { ports: [], warnings };
  }
  const shared = sharedFields(svc, family, warnings);
  const ports: ServicePortInfo[] = [];
  for (const port of svc.spec?.ports ?? []) {
    const protocol = port.protocol ?? "TCP";
    if (!isProtocol(protocol)) {
      warnings.push(`port ${JSON.stringify(port.name ?? "")} has unsupported protocol ${protocol}, skipped`);
      continue;
    }
    if (!Number.isInteger(port.port) || port.port < 1 || port.port > 65535) {
      warnings.push(`port ${JSON.stringify(port.name ?? "")} has invalid number ${port.port}, skipped`);
      continue;
    }
    ports.push(portInfo(svc, { ...port, protocol }, clusterIP, shared));
  }
  return { ports, warnings };
}

/** The port can be reached other than through its ClusterIP. */
export function externallyAccessible(sp: ServicePortInfo): boolean {
  return sp.nodePort !== 0 || sp.loadBalancerVIPs.length > 0 || sp.externalIPs.length > 0;
}

/**
 * Some traffic to the port is routed with Cluster policy. Any externally accessible port
 * needs the Cluster endpoints, even with ETP=Local: pod and host traffic to its external
 * addresses is short-circuited to them.
 */
export function usesClusterEndpoints(sp: ServicePortInfo): boolean {
  return !sp.internalPolicyLocal || externallyAccessible(sp);
}

/** Some traffic to the port is routed with Local policy. */
export function usesLocalEndpoints(sp: ServicePortInfo): boolean {
  return sp.internalPolicyLocal || (sp.externalPolicyLocal && externallyAccessible(sp));
}

/** LB source ranges whose CIDR contains `ip` (used to let the node reach its own LB VIPs). */
export function sourceRangesContain(sp: ServicePortInfo, ip: string): boolean {
  const parsed = parseIP(ip);
  if (!parsed) return false;
  return sp.loadBalancerSourceRanges.some((text) => {
    const cidr = parseCIDR(text);
    return cidr !== null && cidrContains(cidr, parsed);
  });
}
