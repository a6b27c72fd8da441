// The local-traffic detector (--detect-local-mode) and the matches it yields in each rule
// language. Shared by every mode so iptables, IPVS and nftables agree on what "local" means.

/**
 * How kube-proxy tells pod traffic from other traffic. Each mode yields an "is local" and an
 * "is not local" match; "none" yields neither, which turns off the rules that need one.
 */
export type LocalDetector =
  | { readonly mode: "ClusterCIDR"; readonly cidr: string }
  | { readonly mode: "NodeCIDR"; readonly cidr: string }
  | { readonly mode: "BridgeInterface"; readonly interfaceName: string }
  | { readonly mode: "InterfaceNamePrefix"; readonly prefix: string }
  | { readonly mode: "none" };

/** The iptables match for traffic from a local pod, or null when the detector has none. */
export function ifLocal(detector: LocalDetector): string[] | null {
  switch (detector.mode) {
    case "ClusterCIDR":
    case "NodeCIDR":
      return ["-s", detector.cidr];
    case "BridgeInterface":
      return ["-i", detector.interfaceName];
    case "InterfaceNamePrefix":
      // iptables spells an interface-name wildcard with a trailing "+"
      return ["-i", `${detector.prefix}+`];
    case "none":
      return null;
  }
}

/** The iptables match for traffic not from a local pod, or null when the detector has none. */
export function ifNotLocal(detector: LocalDetector): string[] | null {
  const local = ifLocal(detector);
  return local ? ["!", ...local] : null;
}

/**
 * The nftables match for traffic from a local pod (negated: not from one), or null when the
 * detector has none. The address keyword follows the CIDR's own family, as upstream's does.
 */
export function nftLocalMatch(detector: LocalDetector, negated: boolean): string | null {
  const not = negated ? "!= " : "";
  switch (detector.mode) {
    case "ClusterCIDR":
    case "NodeCIDR":
      return `${detector.cidr.includes(":") ? "ip6" : "ip"} saddr ${not}${detector.cidr}`;
    case "BridgeInterface":
      return `iifname ${not}${detector.interfaceName}`;
    case "InterfaceNamePrefix":
      // nft spells an interface-name wildcard with a trailing "*"; it may stay unquoted
      return `iifname ${not}${detector.prefix}*`;
    case "none":
      return null;
  }
}
