// Per-family network facts the renderers need, worked out from the options and the Node:
// which families to run, the node IP, the NodePort addresses and the local-traffic detector.
import { BlockList, isIPv6 } from "node:net";
import { networkInterfaces } from "node:os";
import { isUnspecifiedAddress } from "@switchyard/kube";
import { type IPFamily, IPVS_DUMMY_DEVICE, type LocalDetector, type ProxyMode } from "@switchyard/proxier";
import type { Node } from "kubernetes-types/core/v1.js";
import type { ResolvedOptions } from "./config/config.js";
import { familyOf } from "./node-info.js";

/** Thrown for settings that cannot work; main reports it on one line. */
export class NetworkConfigError extends Error {
  override name = "NetworkConfigError";
}

/**
 * The families to proxy, primary first. The primary is the family of the node IP (or of
 * bindAddress); the other one runs too when the node or the cluster CIDRs have an address
 * of it. Upstream runs both whenever the kernel supports IPv6; here a single-stack node
 * gets no ip6 rules at all, which is simpler to inspect.
 */
export function proxyFamilies(
  o: ResolvedOptions,
  ips: Partial<Record<IPFamily, string>>,
): { families: IPFamily[]; nodeIPs: Record<IPFamily, string> } {
  const primary: IPFamily = !isUnspecifiedAddress(o.bindAddress)
    ? familyOf(o.bindAddress)
    : ips.IPv4 === undefined && ips.IPv6 !== undefined
      ? "IPv6"
      : "IPv4";
  const nodeIPs: Record<IPFamily, string> = {
    IPv4: ips.IPv4 ?? "127.0.0.1",
    IPv6: ips.IPv6 ?? "::1",
  };
  if (!isUnspecifiedAddress(o.bindAddress)) nodeIPs[primary] = o.bindAddress;
  const secondary: IPFamily = primary === "IPv4" ? "IPv6" : "IPv4";
  const wantSecondary = ips[secondary] !== undefined || o.clusterCIDRs.some((c) => familyOf(c) === secondary);
  return { families: wantSecondary ? [primary, secondary] : [primary], nodeIPs };
}

function localAddresses(family: IPFamily): string[] {
  const out: string[] = [];
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if ((a.family === "IPv6") === (family === "IPv6")) out.push(a.address);
  }
  return out;
}

/**
 * The node's addresses of one family on every interface but kube-ipvs0 (IPVS mode's VIPs are
 * not node addresses), read once at start-up.
 */
export function nodeAddresses(family: IPFamily): string[] {
  const out: string[] = [];
  for (const [name, list] of Object.entries(networkInterfaces())) {
    if (name === IPVS_DUMMY_DEVICE) continue;
    for (const a of list ?? []) if ((a.family === "IPv6") === (family === "IPv6")) out.push(a.address);
  }
  return out;
}

/** The interfaces holding any of `ips` (ebpf mode's devices when --devices is not given). */
export function devicesHolding(ips: readonly string[]): string[] {
  const out: string[] = [];
  for (const [name, list] of Object.entries(networkInterfaces())) {
    if ((list ?? []).some((a) => ips.includes(a.address))) out.push(name);
  }
  return out.sort();
}

/**
 * --nodeport-addresses for one family: "all" when unset in iptables/ipvs mode, the node IP
 * when unset in nftables or ebpf mode or for "primary", otherwise the local addresses inside the
 * listed CIDRs (read once at start-up).
 */
export function nodePortAddresses(
  o: ResolvedOptions,
  mode: ProxyMode,
  family: IPFamily,
  nodeIP: string,
): string[] | "all" {
  const entries =
    o.nodePortAddresses.length > 0
      ? o.nodePortAddresses
      : mode === "nftables" || mode === "ebpf"
        ? ["primary"]
        : [];
  if (entries.length === 0) return "all";
  const out = new Set<string>();
  const cidrs = new BlockList();
  let anyCIDR = false;
  for (const entry of entries) {
    if (entry === "primary") {
      out.add(nodeIP);
      continue;
    }
    const [addr = "", bits = ""] = entry.split("/");
    const type = isIPv6(addr) ? "ipv6" : "ipv4";
    if (!/^\d+$/.test(bits)) throw new NetworkConfigError(`invalid nodePortAddresses entry "${entry}"`);
    if ((type === "ipv6") !== (family === "IPv6")) continue;
    cidrs.addSubnet(addr, Number(bits), type);
    anyCIDR = true;
  }
  if (anyCIDR) {
    for (const ip of localAddresses(family))
      if (cidrs.check(ip, family === "IPv6" ? "ipv6" : "ipv4")) out.add(ip);
  }
  return [...out].sort();
}

/** The local-traffic detector (--detect-local-mode) for one family; mode "none" when it has no input. */
export function localDetector(o: ResolvedOptions, family: IPFamily, node: Node | undefined): LocalDetector {
  switch (o.detectLocalMode) {
    case "":
    case "ClusterCIDR": {
      const cidr = o.clusterCIDRs.find((c) => familyOf(c) === family);
      return cidr ? { mode: "ClusterCIDR", cidr } : { mode: "none" };
    }
    case "NodeCIDR": {
      // By length: an empty podCIDRs is no podCIDRs (Go cannot tell them apart), so podCIDR still counts.
      const cidrs = node?.spec?.podCIDRs?.length
        ? node.spec.podCIDRs
        : node?.spec?.podCIDR
          ? [node.spec.podCIDR]
          : [];
      const cidr = cidrs.find((c) => familyOf(c) === family);
      return cidr ? { mode: "NodeCIDR", cidr } : { mode: "none" };
    }
    case "BridgeInterface":
      if (o.detectLocal.bridgeInterface === "") throw emptyInterface("InterfaceName");
      return { mode: "BridgeInterface", interfaceName: o.detectLocal.bridgeInterface };
    case "InterfaceNamePrefix":
      if (o.detectLocal.interfaceNamePrefix === "") throw emptyInterface("InterfacePrefix");
      return { mode: "InterfaceNamePrefix", prefix: o.detectLocal.interfaceNamePrefix };
  }
}

/** Upstream's validation error for an interface-based detect-local mode without its interface. */
function emptyInterface(field: "InterfaceName" | "InterfacePrefix"): NetworkConfigError {
  return new NetworkConfigError(
    `KubeProxyConfiguration.DetectLocalConfiguration.${field}: Invalid value: "": must not be empty`,
  );
}
