// iptables mode's localhost NodePorts: DNAT of a packet sent to 127.0.0.1 towards a pod is
// dropped by the kernel as martian unless route_localnet is on (kubernetes#90259). kube-proxy
// turns it on whenever the IPv4 proxier serves NodePorts on loopback.
import type { NodeSetting } from "./node-setting.js";

export const ROUTE_LOCALNET = "net.ipv4.conf.all.route_localnet";

/** kube-proxy's start-up log line, kept word for word so that operators find it. */
export const ROUTE_LOCALNET_MESSAGE =
  "Setting route_localnet=1 to allow node-ports on localhost; to change this either disable iptables.localhostNodePorts (--iptables-localhost-nodeports) or set nodePortAddresses (--nodeport-addresses) to filter loopback addresses";

export function localhostNodePortSettings(enabled: boolean): NodeSetting[] {
  if (!enabled) return [];
  return [
    {
      key: ROUTE_LOCALNET,
      value: 1,
      writeWhen: "differs",
      reason: "NodePorts on 127.0.0.1 are DNATed to pods, which the kernel drops without it",
    },
  ];
}
