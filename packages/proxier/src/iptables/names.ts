// Chain names of kube-proxy's iptables mode. Unlike the nftables table, these chains share
// the kernel's tables with everyone else, hence the "KUBE-" prefix on every name.

import type { EndpointInfo } from "../model/endpoint.js";
import { endpointString } from "../model/endpoint.js";
import { type ServicePortName, servicePortNameString } from "../model/service-port-name.js";
import { sha256Base32 } from "../util/hash.js";

export type IPTablesTable = "filter" | "nat" | "mangle";

// nfacct objects the rules count packets in (upstream's names); their metrics read them at each scrape
/** The nfacct object counting INVALID packets dropped in KUBE-FORWARD. */
export const CT_STATE_INVALID_NFACCT = "ct_state_invalid_dropped_pkts";
/** The nfacct object counting NodePort packets accepted on 127.0.0.0/8. */
export const LOCALHOST_NODEPORTS_NFACCT = "localhost_nps_accepted_pkts";

// top-level chains, rewritten on every sync
export const KUBE_SERVICES_CHAIN = "KUBE-SERVICES";
export const KUBE_EXTERNAL_SERVICES_CHAIN = "KUBE-EXTERNAL-SERVICES";
export const KUBE_NODEPORTS_CHAIN = "KUBE-NODEPORTS";
export const KUBE_POSTROUTING_CHAIN = "KUBE-POSTROUTING";
export const KUBE_MARK_MASQ_CHAIN = "KUBE-MARK-MASQ";
export const KUBE_FORWARD_CHAIN = "KUBE-FORWARD";
export const KUBE_PROXY_FIREWALL_CHAIN = "KUBE-PROXY-FIREWALL";

/** Created in mangle, nat and filter and polled: when it vanishes, someone flushed the tables. */
export const KUBE_PROXY_CANARY_CHAIN = "KUBE-PROXY-CANARY";

/** kubelet's chain; kube-proxy keeps its own copy of the anti-martian rule there. */
export const KUBELET_FIREWALL_CHAIN = "KUBE-FIREWALL";

// per-service chain prefixes
export const SVC_PREFIX = "KUBE-SVC-";
export const SVL_PREFIX = "KUBE-SVL-";
export const FW_PREFIX = "KUBE-FW-";
export const EXT_PREFIX = "KUBE-EXT-";
export const SEP_PREFIX = "KUBE-SEP-";
const SERVICE_CHAIN_PREFIXES = [SVC_PREFIX, SVL_PREFIX, SEP_PREFIX, FW_PREFIX, EXT_PREFIX];

export const BUILTIN_CHAINS: Readonly<Record<IPTablesTable, readonly string[]>> = {
  filter: ["INPUT", "FORWARD", "OUTPUT"],
  nat: ["PREROUTING", "INPUT", "OUTPUT", "POSTROUTING"],
  mangle: ["PREROUTING", "INPUT", "FORWARD", "OUTPUT", "POSTROUTING"],
};

/**
 * 16 base32 characters of sha256(name + protocol). iptables limits chain names to 28
 * characters, and 16 keeps "KUBE-SEP-" names within it while staying collision-free.
 */
export function portProtoHash(spn: ServicePortName): string {
  return sha256Base32(servicePortNameString(spn) + spn.protocol.toLowerCase(), 16);
}

export interface ServicePortChains {
  /** KUBE-SVC-: endpoints for Cluster traffic policy. */
  readonly clusterPolicy: string;
  /** KUBE-SVL-: this node's endpoints, for Local traffic policy. */
  readonly localPolicy: string;
  /** KUBE-EXT-: entry for NodePort, external IP and LoadBalancer traffic. */
  readonly external: string;
  /** KUBE-FW-: loadBalancerSourceRanges. */
  readonly firewall: string;
}

export function servicePortChains(spn: ServicePortName): ServicePortChains {
  const hash = portProtoHash(spn);
  return {
    clusterPolicy: SVC_PREFIX + hash,
    localPolicy: SVL_PREFIX + hash,
    external: EXT_PREFIX + hash,
    firewall: FW_PREFIX + hash,
  };
}

// Names by object identity: the trackers keep a Service port's name and endpoint objects
// unchanged across syncs, so later syncs find every name without building or hashing a key.
const endpointChainsByPort = new WeakMap<ServicePortName, WeakMap<object, string>>();

/** KUBE-SEP-: hash of the service port name, protocol and "ip:port" of the endpoint. */
export function endpointChain(spn: ServicePortName, ep: Pick<EndpointInfo, "ip" | "port">): string {
  let known = endpointChainsByPort.get(spn);
  const cached = known?.get(ep);
  if (cached !== undefined) return cached;
  const text = servicePortNameString(spn) + spn.protocol.toLowerCase() + endpointString(ep);
  const chain = SEP_PREFIX + sha256Base32(text, 16);
  if (!known) {
    known = new WeakMap();
    endpointChainsByPort.set(spn, known);
  }
  known.set(ep, chain);
  return chain;
}

/** Chains owned by one Service port; stale ones are flushed and deleted. */
export function isServiceChainName(name: string): boolean {
  return SERVICE_CHAIN_PREFIXES.some((p) => name.startsWith(p));
}
