// The addresses a Service port answers on: its ClusterIP, its external IPs, its load-balancer VIPs and, with a
// NodePort, each address NodePorts answer on. Each is one frontend (address, port, protocol) of the maps.
import type { ServicePortInfo } from "../model/service-port.js";
import { serviceFlags } from "./layout.js";

export type FrontendKind = "ClusterIP" | "ExternalIP" | "LoadBalancer" | "NodePort";

export interface Frontend {
  readonly kind: FrontendKind;
  readonly address: string;
  readonly port: number;
}

/** The service flag that says which kind of frontend an entry is. */
export const KIND_FLAG: Readonly<Record<FrontendKind, number>> = {
  ClusterIP: serviceFlags.CLUSTER_IP,
  ExternalIP: serviceFlags.EXTERNAL_IP,
  LoadBalancer: serviceFlags.LOAD_BALANCER,
  NodePort: serviceFlags.NODE_PORT,
};

/**
 * The port's frontends. An address and port listed twice (an external IP that is also a VIP, or a node
 * address) is one frontend, of the kind found first in this order, as nftables keeps the first element.
 */
export function frontendsOf(sp: ServicePortInfo, nodePortIPs: readonly string[]): Frontend[] {
  const clusterIP: Frontend = { kind: "ClusterIP", address: sp.clusterIP, port: sp.port };
  // Most ports have only their ClusterIP: nothing to list twice.
  const nodePorts = sp.nodePort > 0 ? nodePortIPs : [];
  if (sp.externalIPs.length + sp.loadBalancerVIPs.length + nodePorts.length === 0) return [clusterIP];
  const all: Frontend[] = [
    clusterIP,
    ...sp.externalIPs.map((address) => ({ kind: "ExternalIP" as const, address, port: sp.port })),
    ...sp.loadBalancerVIPs.map((address) => ({ kind: "LoadBalancer" as const, address, port: sp.port })),
    ...nodePorts.map((address) => ({ kind: "NodePort" as const, address, port: sp.nodePort })),
  ];
  const seen = new Set<string>();
  return all.filter((f) => {
    const id = `${f.address} ${f.port}`;
    if (seen.has(id)) return false;
    seen.add(id);
    return true;
  });
}
