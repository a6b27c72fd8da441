// The fixed part of the kube-proxy table, declared as data and written on every full sync.
import { nftLocalMatch } from "../model/local-detector.js";
import * as N from "./names.js";
import type { ChainObject } from "./objects.js";
import { addrType, ipX, masqueradeMark, type NFTablesOptions, setMasqueradeMark } from "./options.js";
import type { Transaction } from "./transaction.js";

/** Chains attached to netfilter hooks; each is named "<type>-<hook>[-pre-dnat]". */
export const BASE_CHAINS: readonly Required<Pick<ChainObject, "name" | "type" | "hook" | "priority">>[] = [
  // Filtering that must see the original (pre-DNAT) destination runs before dstnat (-100).
  { name: N.FILTER_PREROUTING_PRE_DNAT_CHAIN, type: "filter", hook: "prerouting", priority: -110 },
  { name: N.FILTER_OUTPUT_PRE_DNAT_CHAIN, type: "filter", hook: "output", priority: -110 },
  // These run after DNAT, so a packet still addressed to a ClusterIP was not load-balanced.
  { name: N.FILTER_INPUT_CHAIN, type: "filter", hook: "input", priority: 0 },
  { name: N.FILTER_FORWARD_CHAIN, type: "filter", hook: "forward", priority: 0 },
  { name: N.FILTER_OUTPUT_CHAIN, type: "filter", hook: "output", priority: 0 },
  { name: N.NAT_PREROUTING_CHAIN, type: "nat", hook: "prerouting", priority: -100 },
  { name: N.NAT_OUTPUT_CHAIN, type: "nat", hook: "output", priority: -100 },
  { name: N.NAT_POSTROUTING_CHAIN, type: "nat", hook: "postrouting", priority: 100 },
];

/** Regular chains entered from a base chain: {to, from, match}. */
export const JUMP_CHAINS: readonly { to: string; from: string; match: string }[] = [
  // reject is only valid in input/forward/output hooks on older kernels, hence not prerouting.
  { to: N.NODEPORT_ENDPOINTS_CHECK_CHAIN, from: N.FILTER_INPUT_CHAIN, match: "ct state new" },
  { to: N.SERVICE_ENDPOINTS_CHECK_CHAIN, from: N.FILTER_INPUT_CHAIN, match: "ct state new" },
  { to: N.SERVICE_ENDPOINTS_CHECK_CHAIN, from: N.FILTER_FORWARD_CHAIN, match: "ct state new" },
  { to: N.SERVICE_ENDPOINTS_CHECK_CHAIN, from: N.FILTER_OUTPUT_CHAIN, match: "ct state new" },
  { to: N.FIREWALL_CHECK_CHAIN, from: N.FILTER_PREROUTING_PRE_DNAT_CHAIN, match: "ct state new" },
  { to: N.FIREWALL_CHECK_CHAIN, from: N.FILTER_OUTPUT_PRE_DNAT_CHAIN, match: "ct state new" },
  { to: N.SERVICES_CHAIN, from: N.NAT_OUTPUT_CHAIN, match: "" },
  { to: N.SERVICES_CHAIN, from: N.NAT_PREROUTING_CHAIN, match: "" },
  { to: N.MASQUERADING_CHAIN, from: N.NAT_POSTROUTING_CHAIN, match: "" },
  { to: N.CLUSTER_IPS_CHECK_CHAIN, from: N.FILTER_FORWARD_CHAIN, match: "ct state new" },
  { to: N.CLUSTER_IPS_CHECK_CHAIN, from: N.FILTER_OUTPUT_CHAIN, match: "ct state new" },
];

/**
 * The shared sets and maps whose elements are kept in step with the previous sync (see
 * ElementStore), rather than rewritten, on every sync.
 */
export const CONTAINERS = [
  { kind: "set", name: N.CLUSTER_IPS_SET },
  { kind: "map", name: N.SERVICE_IPS_MAP },
  { kind: "map", name: N.FIREWALL_IPS_MAP },
  { kind: "map", name: N.NO_ENDPOINT_SERVICES_MAP },
  { kind: "map", name: N.NO_ENDPOINT_NODEPORTS_MAP },
  { kind: "map", name: N.SERVICE_NODEPORTS_MAP },
  { kind: "set", name: N.HAIRPIN_CONNECTIONS_SET },
] as const;

export type ContainerName = (typeof CONTAINERS)[number]["name"];

/**
 * Objects of kube-proxy's optional localhost-NodePort rejection, which we never enable.
 * kube-proxy removes them on every full sync in case an earlier run had it on; so do we.
 */
const LOCALHOST_NODEPORT_LEFTOVERS = {
  map: "localhost-nodeport-reject-ports",
  protocols: ["tcp", "udp", "sctp"],
} as const;

function ensureChain(tx: Transaction, name: string, done: Set<string>): void {
  if (done.has(name)) return;
  done.add(name);
  tx.add({ kind: "chain", name });
  tx.flush({ kind: "chain", name });
}

/**
 * Writes the skeleton. `recreateBaseChains` (first sync after start) adds and deletes every
 * base chain once, so that changed properties such as a priority can be applied.
 */
export function writeSkeleton(tx: Transaction, options: NFTablesOptions, recreateBaseChains: boolean): void {
  tx.add({ kind: "table", comment: "rules for kube-proxy" });
  writeChains(tx, recreateBaseChains);
  writeMasquerading(tx, options);
  writeClusterIPsCheck(tx, options);
  writeNodePortIPs(tx, options);
  writeNoEndpointRules(tx, options);
  removeLocalhostNodePortLeftovers(tx);
  writeFirewallCheck(tx, options);
  writeServiceDispatch(tx, options);
}

function writeChains(tx: Transaction, recreateBaseChains: boolean): void {
  if (recreateBaseChains) {
    for (const bc of BASE_CHAINS) {
      tx.add({ kind: "chain", name: bc.name });
      tx.delete({ kind: "chain", name: bc.name });
    }
  }
  for (const bc of BASE_CHAINS) {
    tx.add({ kind: "chain", ...bc });
    tx.flush({ kind: "chain", name: bc.name });
  }
  const created = new Set<string>();
  for (const jc of JUMP_CHAINS) {
    ensureChain(tx, jc.to, created);
    tx.add({ kind: "rule", chain: jc.from, rule: [jc.match, "jump", jc.to].filter(Boolean).join(" ") });
  }
}

function writeMasquerading(tx: Transaction, options: NFTablesOptions): void {
  const ip = ipX(options);
  const addr = addrType(options);
  const mark = masqueradeMark(options);
  tx.add({
    kind: "set",
    name: N.HAIRPIN_CONNECTIONS_SET,
    type: `${addr} . ${addr} . inet_proto . inet_service`,
    comment: "service hairpin connections",
  });
  // One rule clears the mark and masquerades, so a packet that re-enters the stack (say,
  // over a tunnel) does not carry the request with it.
  tx.add({
    kind: "rule",
    chain: N.MASQUERADING_CHAIN,
    rule: `mark and ${mark} != 0 mark set mark xor ${mark} masquerade fully-random`,
  });
  // A pod that reached itself through a service must be SNATed, or it would answer itself
  // directly and the client would drop the reply. Only conntrack still knows it was DNATed.
  tx.add({
    kind: "rule",
    chain: N.MASQUERADING_CHAIN,
    rule: `ct status dnat ${ip} saddr . ${ip} daddr . meta l4proto . th dport @${N.HAIRPIN_CONNECTIONS_SET} masquerade fully-random`,
  });
}

function writeClusterIPsCheck(tx: Transaction, options: NFTablesOptions): void {
  const ip = ipX(options);
  tx.add({ kind: "set", name: N.CLUSTER_IPS_SET, type: addrType(options), comment: "Active ClusterIPs" });
  tx.add({
    kind: "rule",
    chain: N.CLUSTER_IPS_CHECK_CHAIN,
    rule: `${ip} daddr @${N.CLUSTER_IPS_SET} reject`,
    comment: "Reject traffic to invalid ports of ClusterIPs",
  });
  if (options.serviceCIDRs?.length) {
    tx.add({
      kind: "rule",
      chain: N.CLUSTER_IPS_CHECK_CHAIN,
      rule: `${ip} daddr { ${options.serviceCIDRs.join(",")} } drop`,
      comment: "Drop traffic to unallocated ClusterIPs",
    });
  }
}

function writeNodePortIPs(tx: Transaction, options: NFTablesOptions): void {
  // "add" before "delete" so that deleting a set that is already gone is not an error.
  tx.add({
    kind: "set",
    name: N.NODEPORT_IPS_SET,
    type: addrType(options),
    comment: "IPs that accept NodePort traffic",
  });
  if (options.nodePortAddresses === "all") {
    tx.delete({ kind: "set", name: N.NODEPORT_IPS_SET });
  } else {
    tx.flush({ kind: "set", name: N.NODEPORT_IPS_SET });
    for (const nodeIP of options.nodePortAddresses) {
      tx.add({ kind: "element", set: N.NODEPORT_IPS_SET, key: [nodeIP] });
    }
  }
}

function writeNoEndpointRules(tx: Transaction, options: NFTablesOptions): void {
  const ip = ipX(options);
  tx.add({
    kind: "map",
    name: N.NO_ENDPOINT_SERVICES_MAP,
    type: `${addrType(options)} . inet_proto . inet_service : verdict`,
    comment: "vmap to drop or reject packets to services with no endpoints",
  });
  tx.add({
    kind: "map",
    name: N.NO_ENDPOINT_NODEPORTS_MAP,
    type: "inet_proto . inet_service : verdict",
    comment: "vmap to drop or reject packets to service nodeports with no endpoints",
  });
  tx.add({
    kind: "chain",
    name: N.REJECT_CHAIN,
    comment: "helper for @no-endpoint-services / @no-endpoint-nodeports",
  });
  tx.flush({ kind: "chain", name: N.REJECT_CHAIN });
  tx.add({ kind: "rule", chain: N.REJECT_CHAIN, rule: "reject" });
  tx.add({
    kind: "rule",
    chain: N.SERVICE_ENDPOINTS_CHECK_CHAIN,
    rule: `${ip} daddr . meta l4proto . th dport vmap @${N.NO_ENDPOINT_SERVICES_MAP}`,
  });
  tx.add({
    kind: "rule",
    chain: N.NODEPORT_ENDPOINTS_CHECK_CHAIN,
    rule:
      options.nodePortAddresses === "all"
        ? `${noLocalhostMatch(options)} meta l4proto . th dport vmap @${N.NO_ENDPOINT_NODEPORTS_MAP}`
        : `${ip} daddr @${N.NODEPORT_IPS_SET} meta l4proto . th dport vmap @${N.NO_ENDPOINT_NODEPORTS_MAP}`,
  });
}

function writeFirewallCheck(tx: Transaction, options: NFTablesOptions): void {
  tx.add({
    kind: "map",
    name: N.FIREWALL_IPS_MAP,
    type: `${addrType(options)} . inet_proto . inet_service : verdict`,
    comment: "destinations that are subject to LoadBalancerSourceRanges",
  });
  tx.add({
    kind: "rule",
    chain: N.FIREWALL_CHECK_CHAIN,
    rule: `${ipX(options)} daddr . meta l4proto . th dport vmap @${N.FIREWALL_IPS_MAP}`,
  });
}

function writeServiceDispatch(tx: Transaction, options: NFTablesOptions): void {
  const ip = ipX(options);
  tx.add({
    kind: "map",
    name: N.SERVICE_IPS_MAP,
    type: `${addrType(options)} . inet_proto . inet_service : verdict`,
    comment: "ClusterIP, ExternalIP and LoadBalancer IP traffic",
  });
  tx.add({
    kind: "map",
    name: N.SERVICE_NODEPORTS_MAP,
    type: "inet_proto . inet_service : verdict",
    comment: "NodePort traffic",
  });
  writeClusterIPMasquerade(tx, options);
  tx.add({
    kind: "rule",
    chain: N.SERVICES_CHAIN,
    rule: `${ip} daddr . meta l4proto . th dport vmap @${N.SERVICE_IPS_MAP}`,
  });
  tx.add({
    kind: "rule",
    chain: N.SERVICES_CHAIN,
    rule:
      options.nodePortAddresses === "all"
        ? `fib daddr type local ${noLocalhostMatch(options)} meta l4proto . th dport vmap @${N.SERVICE_NODEPORTS_MAP}`
        : `${ip} daddr @${N.NODEPORT_IPS_SET} meta l4proto . th dport vmap @${N.SERVICE_NODEPORTS_MAP}`,
  });
}

/** "Any local address but loopback", for NodePorts served on every address. */
function noLocalhostMatch(options: NFTablesOptions): string {
  return options.family === "IPv6" ? "ip6 daddr != ::1" : "ip daddr != 127.0.0.0/8";
}

/**
 * One rule for every ClusterIP at once. Traffic from outside the pod network (e.g. over a
 * static route to a node) may leave the node again towards an endpoint elsewhere, so it is
 * masqueraded to bring the replies back through us. Without local detection we cannot tell.
 */
function writeClusterIPMasquerade(tx: Transaction, options: NFTablesOptions): void {
  const ip = ipX(options);
  const setMark = setMasqueradeMark(options);
  const notLocal = nftLocalMatch(options.localDetector, true);
  if (options.masqueradeAll) {
    tx.add({
      kind: "rule",
      chain: N.SERVICES_CHAIN,
      rule: `${ip} daddr @${N.CLUSTER_IPS_SET} ${setMark}`,
      comment: "masquerade all clusterIP traffic",
    });
  } else if (notLocal !== null) {
    tx.add({
      kind: "rule",
      chain: N.SERVICES_CHAIN,
      rule: `${ip} daddr @${N.CLUSTER_IPS_SET} ${notLocal} ${setMark}`,
      comment: "masquerade clusterIP traffic from outside cluster",
    });
  }
}

function removeLocalhostNodePortLeftovers(tx: Transaction): void {
  const { map, protocols } = LOCALHOST_NODEPORT_LEFTOVERS;
  tx.add({
    kind: "map",
    name: map,
    type: "inet_proto . inet_service : verdict",
    comment: "localhost NodePorts rejected by kube-proxy",
  });
  tx.delete({ kind: "map", name: map });
  for (const proto of protocols) {
    tx.add({ kind: "chain", name: `localhost-nodeport-reject-${proto}` });
    tx.delete({ kind: "chain", name: `localhost-nodeport-reject-${proto}` });
    tx.add({ kind: "counter", name: `localhost-nodeport-rejected-${proto}` });
    tx.delete({ kind: "counter", name: `localhost-nodeport-rejected-${proto}` });
  }
}
