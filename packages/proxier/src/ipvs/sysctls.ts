// The sysctls kube-proxy's IPVS mode sets at start-up (pkg/proxy/ipvs/proxier.go NewProxier),
// as data so the app can apply them through its exec and tests can read them.

export interface Sysctl {
  readonly key: string;
  readonly value: string;
  /** Why upstream sets it. */
  readonly reason: string;
}

export function ipvsSysctls(strictARP: boolean): Sysctl[] {
  const out: Sysctl[] = [
    {
      key: "net.ipv4.vs.conntrack",
      value: "1",
      reason: "IPVS keeps conntrack entries, which the iptables masquerade rules need",
    },
    {
      key: "net.ipv4.vs.expire_nodest_conn",
      value: "1",
      reason: "drop flows to a deleted real server instead of black-holing them",
    },
    {
      key: "net.ipv4.vs.expire_quiescent_template",
      value: "1",
      reason: "persistence templates of weight-0 servers expire, so affinity stops picking them",
    },
    { key: "net.ipv4.ip_forward", value: "1", reason: "real servers are reached by forwarding" },
  ];
  // The VIPs sit on kube-ipvs0; without these the node answers ARP for them on every link.
  if (strictARP) {
    out.push(
      { key: "net.ipv4.conf.all.arp_ignore", value: "1", reason: "strictARP" },
      { key: "net.ipv4.conf.all.arp_announce", value: "2", reason: "strictARP" },
    );
  }
  return out;
}
