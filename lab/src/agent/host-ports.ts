import { familyOf } from "@switchyard/basics";
import type { Pod } from "kubernetes-types/core/v1.js";

/** One `hostPort` of a pod: traffic to the node on (hostIp, protocol, hostPort) goes to the pod's containerPort. */
export interface HostPortMapping {
  /** undefined: any of the node's addresses (hostIP empty or 0.0.0.0). */
  hostIp: string | undefined;
  protocol: "tcp" | "udp" | "sctp";
  hostPort: number;
  podIp: string;
  containerPort: number;
}

/** The node's table: one map keyed by address, protocol and port, one by protocol and port for any address. */
export const hostPortTable = "switchyard-hostports";

/**
 * The table the CNI portmap plugin's job is done with here, in nftables: DNAT before kube-proxy's (priority
 * -101, dstnat is -100) for traffic arriving at the node and for the node's own (output), the maps filled per pod;
 * and, as portmap does for a hostIP of 127.0.0.1, masquerade of loopback sources sent on to a pod (the kernel
 * routes those off the loopback only with route_localnet on the bridge). Recreated empty: an agent that starts
 * again starts its pods again.
 */
export function hostPortRuleset(): string {
  const t = hostPortTable;
  return [
    `table ip ${t} {}`,
    `delete table ip ${t}`,
    `table ip ${t} {`,
    "  map by-address { type ipv4_addr . inet_proto . inet_service : ipv4_addr . inet_service; }",
    "  map any-address { type inet_proto . inet_service : ipv4_addr . inet_service; }",
    "  chain hostports {",
    "    dnat ip to ip daddr . meta l4proto . th dport map @by-address",
    "    fib daddr type local dnat ip to meta l4proto . th dport map @any-address",
    "  }",
    "  chain prerouting { type nat hook prerouting priority -101; policy accept; jump hostports; }",
    "  chain output { type nat hook output priority -101; policy accept; jump hostports; }",
    "  chain postrouting { type nat hook postrouting priority 99; policy accept; ip saddr 127.0.0.0/8 ct status dnat masquerade; }",
    "}",
  ].join("\n");
}

/**
 * The pod's hostPorts, as the kubelet hands them to the CNI portmap plugin: every container port with a hostPort,
 * IPv4 ones (this table's family) only. hostNetwork pods listen on the node's ports themselves: none.
 */
export function hostPortMappings(pod: Pod, podIp: string | undefined): HostPortMapping[] {
  if (pod.spec?.hostNetwork || !podIp || familyOf(podIp) !== "IPv4") return [];
  const out: HostPortMapping[] = [];
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? []) {
      if (!p.hostPort) continue;
      const hostIp = p.hostIP && p.hostIP !== "0.0.0.0" ? p.hostIP : undefined;
      if (hostIp && familyOf(hostIp) !== "IPv4") continue;
      const protocol = (p.protocol ?? "TCP").toLowerCase() as HostPortMapping["protocol"];
      out.push({ hostIp, protocol, hostPort: p.hostPort, podIp, containerPort: p.containerPort });
    }
  return out;
}

/** The nft commands that add the mappings to the node's maps, and those that take them out again. */
export function hostPortCommands(mappings: readonly HostPortMapping[]): { add: string[]; remove: string[] } {
  const add: string[] = [];
  const remove: string[] = [];
  for (const m of mappings) {
    const key = `${m.hostIp ? `${m.hostIp} . ` : ""}${m.protocol} . ${m.hostPort}`;
    const map = m.hostIp ? "by-address" : "any-address";
    add.push(`add element ip ${hostPortTable} ${map} { ${key} : ${m.podIp} . ${m.containerPort} }`);
    remove.push(`delete element ip ${hostPortTable} ${map} { ${key} }`);
  }
  return { add, remove };
}
