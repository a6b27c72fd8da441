// The kernel settings IPVS mode makes before its first sync (pkg/proxy/ipvs/proxier.go
// NewProxier), in upstream's order, as NodeSettings for the shared applier: each is written
// only when it differs, as upstream's EnsureSysctl does.
import { type KernelVersion, kernelBefore } from "../sysctl/kernel-version.js";
import type { NodeSetting } from "../sysctl/node-setting.js";

export const IPVS_CONN_REUSE_MODE = "net.ipv4.vs.conn_reuse_mode";
/** Kernels before this have no conn_reuse_mode. */
export const CONN_REUSE_MODE_MIN_KERNEL: KernelVersion = [4, 1, 0];
/** From this kernel on conn_reuse_mode no longer stalls reused ports (kubernetes#93297): left alone. */
export const CONN_REUSE_MODE_FIXED_KERNEL: KernelVersion = [5, 9, 0];

/** What upstream does with conn_reuse_mode on this kernel. */
export function connReuseMode(kernel: KernelVersion): "unsupported" | "left-as-is" | "set" {
  if (kernelBefore(kernel, CONN_REUSE_MODE_MIN_KERNEL)) return "unsupported";
  if (!kernelBefore(kernel, CONN_REUSE_MODE_FIXED_KERNEL)) return "left-as-is";
  return "set";
}

const differs = (key: string, value: number, reason: string): NodeSetting => ({
  key,
  value,
  writeWhen: "differs",
  reason,
});

export function ipvsSettings(strictARP: boolean, kernel: KernelVersion): NodeSetting[] {
  const out: NodeSetting[] = [
    differs(
      "net.ipv4.vs.conntrack",
      1,
      "IPVS keeps conntrack entries, which the iptables masquerade rules need",
    ),
  ];
  if (connReuseMode(kernel) === "set") {
    out.push(differs(IPVS_CONN_REUSE_MODE, 0, "older kernels stall connections that reuse a source port"));
  }
  out.push(
    differs(
      "net.ipv4.vs.expire_nodest_conn",
      1,
      "drop flows to a deleted real server instead of black-holing them",
    ),
    differs(
      "net.ipv4.vs.expire_quiescent_template",
      1,
      "persistence templates of weight-0 servers expire, so affinity stops picking them",
    ),
    differs("net.ipv4.ip_forward", 1, "real servers are reached by forwarding"),
  );
  // The VIPs sit on kube-ipvs0; without these the node answers ARP for them on every link.
  if (strictARP) {
    out.push(
      differs("net.ipv4.conf.all.arp_ignore", 1, "ipvs.strictARP"),
      differs("net.ipv4.conf.all.arp_announce", 2, "ipvs.strictARP"),
    );
  }
  return out;
}
