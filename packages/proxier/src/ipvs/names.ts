// Names kube-proxy's IPVS mode gives its ipsets and iptables chains. The sets keep the
// iptables part constant-size: rules match a set, and only set members change per Service.
import type { IPFamily } from "@switchyard/basics";

/** The dummy interface that holds every Service VIP, so the node accepts packets to them. */
export const DUMMY_DEVICE = "kube-ipvs0";
export const DEFAULT_SCHEDULER = "rr";

// nat chains
export const KUBE_SERVICES = "KUBE-SERVICES";
export const KUBE_POSTROUTING = "KUBE-POSTROUTING";
export const KUBE_NODE_PORT = "KUBE-NODE-PORT";
export const KUBE_LOAD_BALANCER = "KUBE-LOAD-BALANCER";
export const KUBE_MARK_MASQ = "KUBE-MARK-MASQ";
// filter chains (KUBE-NODE-PORT exists in both tables)
export const KUBE_FORWARD = "KUBE-FORWARD";
export const KUBE_PROXY_FIREWALL = "KUBE-PROXY-FIREWALL";
export const KUBE_SOURCE_RANGES_FIREWALL = "KUBE-SOURCE-RANGES-FIREWALL";
/** Rejects new connections to a VIP on a port no virtual server uses (kubernetes#72236). */
export const KUBE_IPVS_FILTER = "KUBE-IPVS-FILTER";
/** Drops node-originated traffic to LB VIPs whose source ranges exclude the node (kubernetes#119656). */
export const KUBE_IPVS_OUT_FILTER = "KUBE-IPVS-OUT-FILTER";

/** Chains declared at the top of every restore, in kube-proxy's order. */
export const NAT_CHAINS = [
  KUBE_SERVICES,
  KUBE_POSTROUTING,
  KUBE_NODE_PORT,
  KUBE_LOAD_BALANCER,
  KUBE_MARK_MASQ,
];
export const FILTER_CHAINS = [
  KUBE_FORWARD,
  KUBE_NODE_PORT,
  KUBE_PROXY_FIREWALL,
  KUBE_SOURCE_RANGES_FIREWALL,
  KUBE_IPVS_FILTER,
  KUBE_IPVS_OUT_FILTER,
];

export type IPSetType = "hash:ip" | "hash:ip,port" | "hash:ip,port,ip" | "hash:ip,port,net" | "bitmap:port";

/** The IPv4 names; the IPv6 proxier derives its own with ipsetName(). */
export const LOOP_BACK = "KUBE-LOOP-BACK";
export const CLUSTER_IP = "KUBE-CLUSTER-IP";
export const EXTERNAL_IP = "KUBE-EXTERNAL-IP";
export const EXTERNAL_IP_LOCAL = "KUBE-EXTERNAL-IP-LOCAL";
export const LOAD_BALANCER = "KUBE-LOAD-BALANCER";
export const LOAD_BALANCER_FW = "KUBE-LOAD-BALANCER-FW";
export const LOAD_BALANCER_LOCAL = "KUBE-LOAD-BALANCER-LOCAL";
export const LOAD_BALANCER_SOURCE_IP = "KUBE-LOAD-BALANCER-SOURCE-IP";
export const LOAD_BALANCER_SOURCE_CIDR = "KUBE-LOAD-BALANCER-SOURCE-CIDR";
export const NODE_PORT_TCP = "KUBE-NODE-PORT-TCP";
export const NODE_PORT_LOCAL_TCP = "KUBE-NODE-PORT-LOCAL-TCP";
export const NODE_PORT_UDP = "KUBE-NODE-PORT-UDP";
export const NODE_PORT_LOCAL_UDP = "KUBE-NODE-PORT-LOCAL-UDP";
// SCTP NodePorts cannot use bitmap:port (it only knows TCP and UDP), hence ip,port per node IP.
export const NODE_PORT_SCTP = "KUBE-NODE-PORT-SCTP-HASH";
export const NODE_PORT_LOCAL_SCTP = "KUBE-NODE-PORT-LOCAL-SCTP-HASH";
export const HEALTH_CHECK_NODE_PORT = "KUBE-HEALTH-CHECK-NODE-PORT";
export const IPVS_IPS = "KUBE-IPVS-IPS";

export interface IPSetInfo {
  readonly name: string;
  readonly type: IPSetType;
  /** Written into the iptables rules that match the set, not into the set itself. */
  readonly comment: string;
}

/** Every set kube-proxy creates, in its order; the comments are kube-proxy's, byte for byte. */
export const IPSETS: readonly IPSetInfo[] = [
  {
    name: LOOP_BACK,
    type: "hash:ip,port,ip",
    comment: "Kubernetes endpoints dst ip:port, source ip for solving hairpin purpose",
  },
  {
    name: CLUSTER_IP,
    type: "hash:ip,port",
    comment: "Kubernetes service cluster ip + port for masquerade purpose",
  },
  {
    name: EXTERNAL_IP,
    type: "hash:ip,port",
    comment: "Kubernetes service external ip + port for masquerade and filter purpose",
  },
  {
    name: EXTERNAL_IP_LOCAL,
    type: "hash:ip,port",
    comment: "Kubernetes service external ip + port with externalTrafficPolicy=local",
  },
  { name: LOAD_BALANCER, type: "hash:ip,port", comment: "Kubernetes service lb portal" },
  {
    name: LOAD_BALANCER_FW,
    type: "hash:ip,port",
    comment: "Kubernetes service load balancer ip + port for load balancer with sourceRange",
  },
  {
    name: LOAD_BALANCER_LOCAL,
    type: "hash:ip,port",
    comment: "Kubernetes service load balancer ip + port with externalTrafficPolicy=local",
  },
  {
    name: LOAD_BALANCER_SOURCE_IP,
    type: "hash:ip,port,ip",
    comment: "Kubernetes service load balancer ip + port + source IP for packet filter purpose",
  },
  {
    name: LOAD_BALANCER_SOURCE_CIDR,
    type: "hash:ip,port,net",
    comment: "Kubernetes service load balancer ip + port + source cidr for packet filter purpose",
  },
  {
    name: NODE_PORT_TCP,
    type: "bitmap:port",
    comment: "Kubernetes nodeport TCP port for masquerade purpose",
  },
  {
    name: NODE_PORT_LOCAL_TCP,
    type: "bitmap:port",
    comment: "Kubernetes nodeport TCP port with externalTrafficPolicy=local",
  },
  {
    name: NODE_PORT_UDP,
    type: "bitmap:port",
    comment: "Kubernetes nodeport UDP port for masquerade purpose",
  },
  {
    name: NODE_PORT_LOCAL_UDP,
    type: "bitmap:port",
    comment: "Kubernetes nodeport UDP port with externalTrafficPolicy=local",
  },
  {
    name: NODE_PORT_SCTP,
    type: "hash:ip,port",
    comment: "Kubernetes nodeport SCTP port for masquerade purpose with type 'hash ip:port'",
  },
  {
    name: NODE_PORT_LOCAL_SCTP,
    type: "hash:ip,port",
    comment: "Kubernetes nodeport SCTP port with externalTrafficPolicy=local with type 'hash ip:port'",
  },
  { name: HEALTH_CHECK_NODE_PORT, type: "bitmap:port", comment: "Kubernetes health check node port" },
  { name: IPVS_IPS, type: "hash:ip", comment: "Addresses on the ipvs interface" },
];

/** ipset limits names to 31 characters. */
const MAX_SET_NAME = 31;

/**
 * The name of a set for one family. Both families' sets live side by side in one kernel,
 * so IPv6 ones become "KUBE-6-…" (cut to 31 characters); IPv4 names stay as they always
 * were so that upgrades find their old sets.
 */
export function ipsetName(base: string, family: IPFamily): string {
  if (family === "IPv4" || !base.startsWith("KUBE-")) return base;
  return `KUBE-6-${base.slice("KUBE-".length)}`.slice(0, MAX_SET_NAME);
}

export function ipsetInfo(base: string): IPSetInfo {
  const info = IPSETS.find((s) => s.name === base);
  if (!info) throw new Error(`ipvs: unknown ipset ${base}`);
  return info;
}

/**
 * A set matched from a fixed chain: `-A <from> [-p proto] -m comment … -m set --match-set
 * <set> <flags> -j <to>`, written only while the set has members. Order matters: a
 * "-LOCAL" set's RETURN must come before the masquerade rule of its sibling.
 */
export interface SetJump {
  readonly set: string;
  readonly table: "nat" | "filter";
  readonly from: string;
  readonly to: string;
  readonly flags: string;
  readonly protocol?: "tcp" | "udp" | "sctp";
}

export const SET_JUMPS: readonly SetJump[] = [
  { set: LOOP_BACK, table: "nat", from: KUBE_POSTROUTING, to: "MASQUERADE", flags: "dst,dst,src" },
  { set: LOAD_BALANCER, table: "nat", from: KUBE_SERVICES, to: KUBE_LOAD_BALANCER, flags: "dst,dst" },
  { set: LOAD_BALANCER_LOCAL, table: "nat", from: KUBE_LOAD_BALANCER, to: "RETURN", flags: "dst,dst" },
  {
    set: NODE_PORT_LOCAL_TCP,
    table: "nat",
    from: KUBE_NODE_PORT,
    to: "RETURN",
    flags: "dst",
    protocol: "tcp",
  },
  {
    set: NODE_PORT_TCP,
    table: "nat",
    from: KUBE_NODE_PORT,
    to: KUBE_MARK_MASQ,
    flags: "dst",
    protocol: "tcp",
  },
  {
    set: NODE_PORT_LOCAL_UDP,
    table: "nat",
    from: KUBE_NODE_PORT,
    to: "RETURN",
    flags: "dst",
    protocol: "udp",
  },
  {
    set: NODE_PORT_UDP,
    table: "nat",
    from: KUBE_NODE_PORT,
    to: KUBE_MARK_MASQ,
    flags: "dst",
    protocol: "udp",
  },
  {
    set: NODE_PORT_LOCAL_SCTP,
    table: "nat",
    from: KUBE_NODE_PORT,
    to: "RETURN",
    flags: "dst,dst",
    protocol: "sctp",
  },
  {
    set: NODE_PORT_SCTP,
    table: "nat",
    from: KUBE_NODE_PORT,
    to: KUBE_MARK_MASQ,
    flags: "dst,dst",
    protocol: "sctp",
  },
  {
    set: LOAD_BALANCER_FW,
    table: "filter",
    from: KUBE_PROXY_FIREWALL,
    to: KUBE_SOURCE_RANGES_FIREWALL,
    flags: "dst,dst",
  },
  {
    set: LOAD_BALANCER_SOURCE_CIDR,
    table: "filter",
    from: KUBE_SOURCE_RANGES_FIREWALL,
    to: "RETURN",
    flags: "dst,dst,src",
  },
  {
    set: LOAD_BALANCER_SOURCE_IP,
    table: "filter",
    from: KUBE_SOURCE_RANGES_FIREWALL,
    to: "RETURN",
    flags: "dst,dst,src",
  },
];
