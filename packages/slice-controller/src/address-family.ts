import { ipFamilyOf } from "@switchyard/basics";
import type { Service } from "kubernetes-types/core/v1.js";
import type { AddressType } from "./types.js";

function isServiceIPSet(service: Service): boolean {
  const clusterIP = service.spec?.clusterIP ?? "";
  return clusterIP !== "None" && clusterIP !== "";
}

/** True when the Service has no cluster IP, which is what upstream calls headless. */
export function isHeadless(service: Service): boolean {
  return !isServiceIPSet(service);
}

/**
 * The address types the Service wants slices for. spec.ipFamilies decides; without it (an apiserver
 * that predates dual-stack) the ClusterIP's family is used, and a headless Service gets both so that
 * its endpoints do not vanish before the apiserver defaults the field.
 */
export function addressTypesForService(service: Service): Set<AddressType> {
  const types = new Set<AddressType>();
  for (const family of service.spec?.ipFamilies ?? []) {
    if (family === "IPv4") types.add("IPv4");
    if (family === "IPv6") types.add("IPv6");
  }
  if (types.size > 0) return types;

  if (isServiceIPSet(service)) {
    const clusterIP = service.spec?.clusterIP ?? "";
    // Upstream's IsIPv6String: ParseIPSloppy reads it, and it is not IPv4 (mapped ones are).
    types.add(ipFamilyOf(clusterIP) === "IPv6" ? "IPv6" : "IPv4");
    return types;
  }
  types.add("IPv4");
  types.add("IPv6");
  return types;
}
