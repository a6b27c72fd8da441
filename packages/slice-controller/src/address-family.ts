import { isIPv4, isIPv6 } from "node:net";
import type { Service } from "kubernetes-types/core/v1.js";
import type { AddressType } from "./types.js";

const IPV4_SLOPPY = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/;

/**
 * Parses an IP the way upstream's ParseIPSloppy does and returns its family and canonical text, or
 * undefined when it is not an IP. Leading zeros in IPv4 octets are read as decimal, IPv6 is
 * compressed, and IPv4-mapped IPv6 counts as IPv4 (Go's net.IP makes the same call).
 */
export function parseIP(text: string): { family: AddressType; address: string } | undefined {
  const v4 = IPV4_SLOPPY.exec(text);
  if (v4) {
    const octets = v4.slice(1).map((o) => Number.parseInt(o, 10));
    if (octets.some((o) => o > 255)) return undefined;
    return { family: "IPv4", address: octets.join(".") };
  }
  if (!isIPv6(text)) return undefined;
  const compressed = new URL(`http://[${text}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(compressed);
  if (mapped) {
    const hi = Number.parseInt(mapped[1] ?? "0", 16);
    const lo = Number.parseInt(mapped[2] ?? "0", 16);
    return { family: "IPv4", address: [hi >> 8, hi & 255, lo >> 8, lo & 255].join(".") };
  }
  return { family: "IPv6", address: compressed };
}

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
    types.add(isIPv6(clusterIP) && !isIPv4(clusterIP) ? "IPv6" : "IPv4");
    return types;
  }
  types.add("IPv4");
  types.add("IPv6");
  return types;
}
