// Names of the kube-proxy table's objects. The table is private to kube-proxy, so nothing
// inside it needs a "kube-" prefix.

import type { EndpointInfo } from "../model/endpoint.js";
import { endpointString } from "../model/endpoint.js";
import type { ServicePortName } from "../model/service-port-name.js";
import { sha256Base32 } from "../util/hash.js";

export const KUBE_PROXY_TABLE = "kube-proxy";

// base chains
export const FILTER_PREROUTING_PRE_DNAT_CHAIN = "filter-prerouting-pre-dnat";
export const FILTER_OUTPUT_PRE_DNAT_CHAIN = "filter-output-pre-dnat";
export const FILTER_INPUT_CHAIN = "filter-input";
export const FILTER_FORWARD_CHAIN = "filter-forward";
export const FILTER_OUTPUT_CHAIN = "filter-output";
export const NAT_PREROUTING_CHAIN = "nat-prerouting";
export const NAT_OUTPUT_CHAIN = "nat-output";
export const NAT_POSTROUTING_CHAIN = "nat-postrouting";

// service dispatch
export const SERVICES_CHAIN = "services";
export const SERVICE_IPS_MAP = "service-ips";
export const SERVICE_NODEPORTS_MAP = "service-nodeports";

// IPs that accept NodePort traffic
export const NODEPORT_IPS_SET = "nodeport-ips";

// active ClusterIPs, and traffic to unallocated ClusterIPs or undefined ports of them
export const CLUSTER_IPS_SET = "cluster-ips";
export const CLUSTER_IPS_CHECK_CHAIN = "cluster-ips-check";

// services with no endpoints
export const SERVICE_ENDPOINTS_CHECK_CHAIN = "service-endpoints-check";
export const NODEPORT_ENDPOINTS_CHECK_CHAIN = "nodeport-endpoints-check";
export const NO_ENDPOINT_SERVICES_MAP = "no-endpoint-services";
export const NO_ENDPOINT_NODEPORTS_MAP = "no-endpoint-nodeports";
export const REJECT_CHAIN = "reject-chain";

// loadBalancerSourceRanges
export const FIREWALL_IPS_MAP = "firewall-ips";
export const FIREWALL_CHECK_CHAIN = "firewall-check";

// masquerading; the mark is set inline where needed, so there is no chain that sets it
export const MASQUERADING_CHAIN = "masquerading";
/** (endpoint IP, endpoint IP, protocol, port) of local endpoints: a pod reaching itself via a service. */
export const HAIRPIN_CONNECTIONS_SET = "hairpin-connections";

/** knftables.NameLengthMax. */
export const NAME_LENGTH_MAX = 256;
/** Longest chain-name prefix ("endpoint-" and friends) we budget for. */
const CHAIN_NAME_PREFIX_LENGTH_MAX = 16;
const CHAIN_NAME_BASE_LENGTH_MAX = NAME_LENGTH_MAX - CHAIN_NAME_PREFIX_LENGTH_MAX;

/**
 * Prefixes `name` with 8 base32 characters of its sha256 and truncates to the budget. The
 * hash keeps names unique after truncation and makes near-identical names easy to tell apart.
 */
export function hashAndTruncate(name: string): string {
  const full = `${sha256Base32(name, 8)}-${name}`;
  return full.length > CHAIN_NAME_BASE_LENGTH_MAX
    ? `${full.slice(0, CHAIN_NAME_BASE_LENGTH_MAX - 3)}...`
    : full;
}

/** "HASH-ns/svc/proto/port". "/" cannot occur in any of the parts, so it separates them. */
export function servicePortChainNameBase(spn: ServicePortName): string {
  return hashAndTruncate(`${spn.namespace}/${spn.name}/${spn.protocol.toLowerCase()}/${spn.port}`);
}

/** "HASH-ns/svc/proto/port__ip/port"; IPv6 colons are not allowed in names and become dots. */
export function endpointChainNameBase(spn: ServicePortName, ep: Pick<EndpointInfo, "ip" | "port">): string {
  const ip = ep.ip.replaceAll(":", ".");
  return hashAndTruncate(
    `${spn.namespace}/${spn.name}/${spn.protocol.toLowerCase()}/${spn.port}__${ip}/${ep.port}`,
  );
}

export interface ServicePortChainNames {
  readonly clusterPolicy: string;
  readonly localPolicy: string;
  readonly external: string;
  readonly firewall: string;
}

export function servicePortChainNames(spn: ServicePortName): ServicePortChainNames {
  const base = servicePortChainNameBase(spn);
  return {
    clusterPolicy: `service-${base}`,
    localPolicy: `local-${base}`,
    external: `external-${base}`,
    firewall: `firewall-${base}`,
  };
}

/** Only session-affinity services have endpoint chains; the others DNAT from their policy chain. */
export function endpointChainName(spn: ServicePortName, ep: EndpointInfo): string {
  return `endpoint-${endpointChainNameBase(spn, ep)}`;
}

export function affinitySetName(spn: ServicePortName, ep: EndpointInfo): string {
  return `affinity-${endpointChainNameBase(spn, ep)}`;
}

/** Per-service chains always contain a "/"; the fixed ones never do. */
export function isServiceChainName(name: string): boolean {
  return name.includes("/");
}

export function isAffinitySetName(name: string): boolean {
  return name.startsWith("affinity-");
}

export { endpointString };
