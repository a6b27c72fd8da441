// Per-node configuration of the IPVS renderer; fixed for the proxier's lifetime.

import { cidrContainsText, type IPFamily, parseIP } from "@switchyard/basics";
import type { LocalDetector } from "../model/local-detector.js";

export interface IPVSOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  /** Topology labels of this node (only topology.kubernetes.io/zone is read). */
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** The node's primary IP of the family; decides whether the node may reach its LB VIPs. */
  readonly nodeIP: string;
  /**
   * The node's local addresses of this family on every interface except kube-ipvs0. An
   * external or LB IP found here is already local and is not bound to the dummy interface.
   */
  readonly nodeAddresses: readonly string[];
  /** "all" (the IPVS default) serves NodePorts on every node address; a list names them. */
  readonly nodePortAddresses: readonly string[] | "all";
  /** --ipvs-scheduler; rr when empty. */
  readonly scheduler?: string;
  readonly masqueradeBit?: number;
  readonly masqueradeAll?: boolean;
  readonly localDetector: LocalDetector;
  /** iptables supports MASQUERADE --random-fully. */
  readonly randomFully?: boolean;
  /** --ipvs-exclude-cidrs: virtual servers there belong to someone else and are never deleted. */
  readonly excludeCIDRs?: readonly string[];
}

/** Loopback never serves NodePorts in IPVS mode, and IPv6 link-local addresses are skipped too. */
function usableNodeAddress(ip: string, family: IPFamily): boolean {
  const parsed = parseIP(ip);
  if (parsed?.family !== family) return false;
  if (family === "IPv4") return !cidrContainsText("127.0.0.0/8", ip);
  return ip !== "::1" && !cidrContainsText("fe80::/10", ip);
}

/** The addresses that get one virtual server per NodePort, sorted and de-duplicated. */
export function nodePortIPs(options: IPVSOptions): string[] {
  const source = options.nodePortAddresses === "all" ? options.nodeAddresses : options.nodePortAddresses;
  const usable = source.filter((ip) => usableNodeAddress(ip, options.family));
  return [...new Set(usable)].sort();
}

export function schedulerOf(options: IPVSOptions): string {
  return options.scheduler === undefined || options.scheduler === "" ? "rr" : options.scheduler;
}

export function excluded(options: IPVSOptions, ip: string): boolean {
  return (options.excludeCIDRs ?? []).some((cidr) => cidrContainsText(cidr, ip));
}
