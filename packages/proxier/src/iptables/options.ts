// Per-node configuration of the iptables renderer; fixed for the proxier's lifetime.

import type { IPFamily } from "@switchyard/basics";
import type { LocalDetector } from "../model/local-detector.js";

export { ifLocal, ifNotLocal, type LocalDetector } from "../model/local-detector.js";

export interface IPTablesOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  /** Topology labels of this node (only topology.kubernetes.io/zone is read). */
  readonly nodeLabels: Readonly<Record<string, string>>;
  /** This node's primary IP of the family; lets the node reach LB VIPs behind source ranges. */
  readonly nodeIP: string;
  /**
   * "all" (the iptables default) accepts NodePorts on every local address; a list names the
   * node addresses that accept them (--nodeport-addresses, already resolved to IPs).
   */
  readonly nodePortAddresses: readonly string[] | "all";
  /** Bit of the packet mark that requests SNAT; kube-proxy's default is 14 (0x4000). */
  readonly masqueradeBit?: number;
  /** Masquerade all traffic to ClusterIPs, not only traffic from outside the pod network. */
  readonly masqueradeAll?: boolean;
  readonly localDetector: LocalDetector;
  /**
   * --iptables-localhost-nodeports (default true). Only honoured for IPv4 and when
   * nodePortAddresses includes 127.0.0.1 ("all" does).
   */
  readonly localhostNodePorts?: boolean;
  /** nf_conntrack_tcp_be_liberal is set: no need to drop INVALID packets. */
  readonly conntrackTCPLiberal?: boolean;
  /** iptables supports MASQUERADE --random-fully (every iptables since 1.6.2). */
  readonly randomFully?: boolean;
  /** nfacct counters kube-proxy managed to create; their rules count matching packets. */
  readonly nfacctCounters?: {
    readonly localhostNodePortsAccepted?: boolean;
    readonly ctStateInvalidDropped?: boolean;
  };
  /** How long stale chains may linger in large-cluster mode (--iptables-sync-period), ms. */
  readonly syncPeriodMs?: number;
}

export { DEFAULT_SYNC_PERIOD_MS } from "../sync/sync-periods.js";

/** The mark as kube-proxy prints it (Go's "%#08x": eight digits after the 0x). */
export function masqueradeMark(options: Pick<IPTablesOptions, "masqueradeBit">): string {
  const value = 1 << (options.masqueradeBit ?? 14);
  return `0x${value.toString(16).padStart(8, "0")}`;
}

/** Localhost NodePorts only work for IPv4 (route_localnet) and when 127.0.0.1 is a NodePort address. */
export function localhostNodePortsEnabled(options: IPTablesOptions): boolean {
  if (options.family !== "IPv4" || options.localhostNodePorts === false) return false;
  return options.nodePortAddresses === "all" || options.nodePortAddresses.some((a) => a.startsWith("127."));
}
