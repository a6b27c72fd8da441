// Per-node configuration of the nftables renderer; fixed for the proxier's lifetime.

import type { IPFamily } from "@switchyard/basics";
import type { LocalDetector } from "../model/local-detector.js";

export interface NFTablesOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  /** Topology labels of this node (only topology.kubernetes.io/zone is read). */
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** This node's primary IP of the family; lets the node reach LB VIPs behind source ranges. */
  readonly nodeIP: string;
  /**
   * Addresses that accept NodePort traffic (`--nodeport-addresses primary` gives the node IP),
   * or "all" for every local address except loopback.
   */
  readonly nodePortAddresses: readonly string[] | "all";
  /** Bit of the packet mark that requests SNAT; kube-proxy's default is 14 (0x4000). */
  readonly masqueradeBit?: number;
  /** Masquerade all traffic to ClusterIPs, not only traffic from outside the pod network. */
  readonly masqueradeAll?: boolean;
  /** How pod traffic is told apart (--detect-local-mode); mode "none" turns the rules needing it off. */
  readonly localDetector: LocalDetector;
  /** ServiceCIDRs of this family; traffic to unallocated IPs inside them is dropped. */
  readonly serviceCIDRs?: readonly string[];
}

/** The mark as kube-proxy prints it (Go's "%#08x": eight digits after the 0x). */
export function masqueradeMark(options: Pick<NFTablesOptions, "masqueradeBit">): string {
  const value = 1 << (options.masqueradeBit ?? 14);
  return `0x${value.toString(16).padStart(8, "0")}`;
}

/** "ip" or "ip6": both the table family and the address-match keyword. */
export function ipX(options: Pick<NFTablesOptions, "family">): "ip" | "ip6" {
  return options.family === "IPv6" ? "ip6" : "ip";
}

export function addrType(options: Pick<NFTablesOptions, "family">): string {
  return options.family === "IPv6" ? "ipv6_addr" : "ipv4_addr";
}

/** The statement that requests SNAT in the masquerading chain; written inline wherever needed. */
export function setMasqueradeMark(options: Pick<NFTablesOptions, "masqueradeBit">): string {
  return `mark set mark or ${masqueradeMark(options)}`;
}
