// Everything one Service port contributes to an IPVS sync: its virtual servers (ClusterIP,
// external IPs, LB VIPs, one per NodePort address), the ipset members, the VIPs to bind.

import { cidrContainsText } from "@switchyard/basics";
import type { EndpointInfo } from "../model/endpoint.js";
import type { ServicePortInfo } from "../model/service-port.js";
import type { NoNodeAccess } from "./iptables-rules.js";
import * as N from "./names.js";
import { type IPVSOptions, nodePortIPs, schedulerOf } from "./options.js";
import type { RealServer, VirtualServer, VirtualServerEntry } from "./virtual-server.js";
import { hostPort } from "./virtual-server.js";

export interface PortPlan {
  readonly virtualServers: readonly VirtualServerEntry[];
  /** [set base name, member] pairs. */
  readonly ipsetEntries: readonly (readonly [string, string])[];
  readonly bind: readonly string[];
  readonly noNodeAccess: readonly NoNodeAccess[];
}

/** The endpoints behind a virtual server; `onlyLocal` when its traffic policy is Local. */
export type EndpointPicker = (onlyLocal: boolean) => readonly EndpointInfo[];

const NODE_PORT_SETS = {
  tcp: [N.NODE_PORT_TCP, N.NODE_PORT_LOCAL_TCP],
  udp: [N.NODE_PORT_UDP, N.NODE_PORT_LOCAL_UDP],
  sctp: [N.NODE_PORT_SCTP, N.NODE_PORT_LOCAL_SCTP],
} as const;

export function planServicePort(
  options: IPVSOptions,
  sp: ServicePortInfo,
  allEndpoints: readonly EndpointInfo[],
  pick: EndpointPicker,
): PortPlan {
  const proto = sp.protocol.toLowerCase() as "tcp" | "udp" | "sctp";
  const entries: [string, string][] = [];
  const servers: VirtualServerEntry[] = [];
  const bind: string[] = [];
  const noNodeAccess: NoNodeAccess[] = [];
  const ipPort = (ip: string, port: number) => `${ip},${proto}:${port}`;
  const addServer = (address: string, port: number, onlyLocal: boolean) => {
    const vs: VirtualServer = {
      protocol: sp.protocol,
      address,
      port,
      scheduler: schedulerOf(options),
      persistence: sp.stickyMaxAgeSeconds,
      // The maglev scheduler hashes the source port too only with this flag.
      schedFlags: schedulerOf(options) === "mh" ? ["mh-port"] : [],
    };
    const reals = new Map<string, RealServer>();
    for (const ep of pick(onlyLocal))
      reals.set(hostPort(ep.ip, ep.port), { address: ep.ip, port: ep.port, weight: 1 });
    servers.push({ vs, reals });
  };
  // An address the node already owns must not be added to the dummy interface as well.
  const shouldBind = (ip: string) => !options.nodeAddresses.includes(ip);

  // Hairpin: a local pod reaching itself through a VIP must be masqueraded. Every local
  // endpoint counts here, ready or not.
  for (const ep of allEndpoints) {
    if (ep.isLocal) entries.push([N.LOOP_BACK, `${ep.ip},${proto}:${ep.port},${ep.ip}`]);
  }

  entries.push([N.CLUSTER_IP, ipPort(sp.clusterIP, sp.port)]);
  addServer(sp.clusterIP, sp.port, sp.internalPolicyLocal);
  bind.push(sp.clusterIP);

  for (const externalIP of sp.externalIPs) {
    entries.push([sp.externalPolicyLocal ? N.EXTERNAL_IP_LOCAL : N.EXTERNAL_IP, ipPort(externalIP, sp.port)]);
    addServer(externalIP, sp.port, sp.externalPolicyLocal);
    if (shouldBind(externalIP)) bind.push(externalIP);
  }

  for (const vip of sp.loadBalancerVIPs) {
    const member = ipPort(vip, sp.port);
    entries.push([N.LOAD_BALANCER, member]);
    if (sp.externalPolicyLocal) entries.push([N.LOAD_BALANCER_LOCAL, member]);
    if (sp.loadBalancerSourceRanges.length > 0) {
      entries.push([N.LOAD_BALANCER_FW, member]);
      for (const cidr of sp.loadBalancerSourceRanges)
        entries.push([N.LOAD_BALANCER_SOURCE_CIDR, `${member},${cidr}`]);
      // Traffic from the node to its own VIP carries the VIP as source (it is on kube-ipvs0).
      if (sp.loadBalancerSourceRanges.some((cidr) => cidrContainsText(cidr, options.nodeIP))) {
        entries.push([N.LOAD_BALANCER_SOURCE_IP, `${member},${vip}`]);
      } else {
        noNodeAccess.push({ ip: vip, protocol: proto, port: sp.port });
      }
    }
    addServer(vip, sp.port, sp.externalPolicyLocal);
    if (shouldBind(vip)) bind.push(vip);
  }

  if (sp.nodePort !== 0) {
    const nodeIPs = nodePortIPs(options);
    // Upstream skips the rest of the port (health check included) when it has no node IP.
    if (nodeIPs.length === 0) return { virtualServers: servers, ipsetEntries: entries, bind, noNodeAccess };
    const members =
      proto === "sctp" ? nodeIPs.map((nodeIP) => ipPort(nodeIP, sp.nodePort)) : [String(sp.nodePort)];
    const [masqSet, localSet] = NODE_PORT_SETS[proto];
    for (const m of members) entries.push([masqSet, m]);
    if (sp.externalPolicyLocal) for (const m of members) entries.push([localSet, m]);
    // Node IPs are local already: nothing to bind.
    for (const nodeIP of nodeIPs) addServer(nodeIP, sp.nodePort, sp.externalPolicyLocal);
  }

  if (sp.healthCheckNodePort !== 0) entries.push([N.HEALTH_CHECK_NODE_PORT, String(sp.healthCheckNodePort)]);
  return { virtualServers: servers, ipsetEntries: entries, bind, noNodeAccess };
}
