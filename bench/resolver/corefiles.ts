// The Corefiles of the benchmark. Both servers read the very same text; only the listening ports differ
// between runs. The upstream is a CoreDNS `template` zone that answers any name under it.

export const ZONE = "cluster.local";
export const UPSTREAM_ZONE = "example.test";

/** The DNS port goes on the command line (`-dns.port`), the same flag for both servers. */
export interface ServerPorts {
  metrics: number;
  ready: number;
}

export interface ClusterDnsOptions {
  kubeconfigPath: string;
  kubeContext: string;
  upstreamPort: number;
  /** `cache 30` in the chain, or no cache plugin at all. */
  cache: boolean;
  ports: ServerPorts;
}

/** The stock kubeadm Corefile minus errors/health/loop/reload/loadbalance, pointed at the lab. */
export function clusterDnsCorefile(o: ClusterDnsOptions): string {
  return [
    ". {",
    `    ready 127.0.0.1:${o.ports.ready}`,
    `    kubernetes ${ZONE} in-addr.arpa ip6.arpa {`,
    `        kubeconfig ${o.kubeconfigPath} ${o.kubeContext}`,
    "        pods insecure",
    "        fallthrough in-addr.arpa ip6.arpa",
    "        ttl 30",
    "    }",
    `    prometheus 127.0.0.1:${o.ports.metrics}`,
    `    forward . 127.0.0.1:${o.upstreamPort}`,
    ...(o.cache ? ["    cache 30"] : []),
    "}",
    "",
  ].join("\n");
}

/** The local upstream: every A question under the zone gets one address, everything else NODATA. */
export function upstreamCorefile(): string {
  return [
    `${UPSTREAM_ZONE} {`,
    "    bind 127.0.0.1",
    `    template IN A ${UPSTREAM_ZONE} {`,
    '        answer "{{ .Name }} 60 IN A 192.0.2.10"',
    "    }",
    "}",
    "",
  ].join("\n");
}

export interface KubeadmPorts extends ServerPorts {
  /** In the Corefile itself (kubeadm's names `.:53`), so `-dns.port` does not apply. */
  dns: number;
  health: number;
}

export interface KubeadmOptions {
  /** Undefined: no `kubeconfig` line, the server uses its in-cluster service account as in a pod. */
  kubeconfigPath?: string;
  kubeContext: string;
  upstreamPort: number;
  ports: KubeadmPorts;
}

/**
 * kubeadm v1.37.2's Corefile (its CoreDNS ConfigMap), changed only where a benchmark on a shared machine
 * must: every listener on 127.0.0.1 and a free port instead of :53, :8080, :8181 and :9153, a
 * `kubeconfig` line unless the server runs on a service account as a pod does (`--in-cluster`), and `forward` to the local upstream instead of
 * /etc/resolv.conf (whose servers are off this machine). Every plugin and option is kubeadm's.
 */
export function kubeadmCorefile(o: KubeadmOptions): string {
  return [
    `.:${o.ports.dns} {`,
    "    errors",
    `    health 127.0.0.1:${o.ports.health} {`,
    "       lameduck 5s",
    "    }",
    `    ready 127.0.0.1:${o.ports.ready}`,
    `    kubernetes ${ZONE} in-addr.arpa ip6.arpa {`,
    ...(o.kubeconfigPath ? [`       kubeconfig ${o.kubeconfigPath} ${o.kubeContext}`] : []),
    "       pods insecure",
    "       fallthrough in-addr.arpa ip6.arpa",
    "       ttl 30",
    "    }",
    `    prometheus 127.0.0.1:${o.ports.metrics}`,
    `    forward . 127.0.0.1:${o.upstreamPort} {`,
    "       max_concurrent 1000",
    "    }",
    "    cache 30 {",
    `       disable success ${ZONE}`,
    `       disable denial ${ZONE}`,
    "    }",
    "    loop",
    "    reload",
    "    loadbalance",
    "}",
    "",
  ].join("\n");
}
