// Objects as the apiserver returns them, small enough to read in a test, and /metrics text in the format
// kube-proxy and CoreDNS write it.
import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";

export const node = (name: string, zone: string, ready = true): Node => ({
  metadata: { name, labels: { "topology.kubernetes.io/zone": zone } },
  spec: { podCIDR: `10.244.${name.slice(-1)}.0/24` },
  status: {
    conditions: [{ type: "Ready", status: ready ? "True" : "False" }],
    addresses: [{ type: "InternalIP", address: `198.18.0.1${name.slice(-1)}` }],
  },
});

export const service = (namespace: string, name: string, extra: Partial<Service["spec"]> = {}): Service => ({
  metadata: { namespace, name },
  spec: {
    type: "ClusterIP",
    clusterIP: "10.96.0.20",
    ports: [{ port: 80, protocol: "TCP", targetPort: 8080 }],
    ...extra,
  },
});

export interface Ep {
  ip: string;
  node: string;
  zone: string;
  ready?: boolean;
  serving?: boolean;
  terminating?: boolean;
  hintZones?: string[];
}

export const slice = (namespace: string, svc: string, name: string, eps: Ep[]): EndpointSlice => ({
  metadata: {
    namespace,
    name,
    labels: {
      "kubernetes.io/service-name": svc,
      "endpointslice.kubernetes.io/managed-by": "endpointslice-controller.k8s.io",
    },
  },
  addressType: "IPv4",
  ports: [{ name: "", port: 8080, protocol: "TCP" }],
  endpoints: eps.map((e) => ({
    addresses: [e.ip],
    nodeName: e.node,
    zone: e.zone,
    targetRef: { kind: "Pod", name: `pod-${e.ip.split(".").at(-1)}`, namespace },
    conditions: {
      ready: e.ready ?? true,
      ...(e.serving !== undefined ? { serving: e.serving } : {}),
      ...(e.terminating !== undefined ? { terminating: e.terminating } : {}),
    },
    ...(e.hintZones ? { hints: { forZones: e.hintZones.map((z) => ({ name: z })) } } : {}),
  })),
});

export const dnsPod = (
  name: string,
  nodeName: string,
  extra: { ready?: boolean; deletion?: string; grace?: number } = {},
): Pod => ({
  metadata: {
    namespace: "kube-system",
    name,
    labels: { "k8s-app": "kube-dns" },
    ...(extra.deletion
      ? { deletionTimestamp: extra.deletion, deletionGracePeriodSeconds: extra.grace ?? 30 }
      : {}),
  },
  spec: { nodeName, containers: [{ name: "coredns" }] },
  status: {
    phase: "Running",
    podIP: "10.244.1.5",
    conditions: [{ type: "Ready", status: extra.ready === false ? "False" : "True" }],
  },
});

export const corefile = (lameduck: string) => `.:53 {
    errors
    health {
       lameduck ${lameduck}
    }
    ready
    cache 30
}
`;

/**
 * A kube-proxy /metrics body: the sync histogram's count and sum, the last sync's time, and the network
 * programming histogram with kube-proxy's bucket bounds (only some of them, cumulative, +Inf last).
 */
export function proxyMetrics(o: {
  syncs: number;
  syncSeconds: number;
  lastSync: number;
  programming: [le: string, count: number][];
  /** ebpf mode's gauges, as its registry prints them: [ip_family, map, entries]. */
  bpfMaps?: [family: string, map: string, entries: number][];
}): string {
  const total = o.programming.at(-1)?.[1] ?? 0;
  const bpf = o.bpfMaps ?? [];
  return [
    "# HELP kubeproxy_sync_proxy_rules_duration_seconds [ALPHA] SyncProxyRules latency in seconds",
    "# TYPE kubeproxy_sync_proxy_rules_duration_seconds histogram",
    `kubeproxy_sync_proxy_rules_duration_seconds_bucket{ip_family="IPv4",le="+Inf"} ${o.syncs}`,
    `kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv4"} ${o.syncSeconds}`,
    `kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"} ${o.syncs}`,
    `kubeproxy_sync_proxy_rules_last_timestamp_seconds{ip_family="IPv4"} ${o.lastSync}`,
    "# TYPE kubeproxy_network_programming_duration_seconds histogram",
    ...o.programming.map(
      ([le, n]) => `kubeproxy_network_programming_duration_seconds_bucket{ip_family="IPv4",le="${le}"} ${n}`,
    ),
    `kubeproxy_network_programming_duration_seconds_sum{ip_family="IPv4"} 1`,
    `kubeproxy_network_programming_duration_seconds_count{ip_family="IPv4"} ${total}`,
    ...bpf.map(([f, m, n]) => `kubeproxy_sync_proxy_rules_bpf_map_entries{ip_family="${f}",map="${m}"} ${n}`),
    // What the last sync wrote: a gauge whose name starts with the one above, to be told apart from it.
    ...bpf.map(([f, m]) => `kubeproxy_sync_proxy_rules_bpf_map_entries_last{ip_family="${f}",map="${m}"} 1`),
    "",
  ].join("\n");
}

/** A CoreDNS /metrics body: requests (over two zones' series) and the cache's requests and hits. */
export const dnsMetrics = (requests: number, cacheRequests: number, cacheHits: number) =>
  [
    `coredns_dns_requests_total{family="1",proto="udp",server="dns://:53",type="A",view="",zone="."} ${requests - 1}`,
    `coredns_dns_requests_total{family="1",proto="udp",server="dns://:53",type="AAAA",view="",zone="."} 1`,
    `coredns_cache_requests_total{server="dns://:53",view="",zones="."} ${cacheRequests}`,
    `coredns_cache_hits_total{server="dns://:53",type="success",view="",zones="."} ${cacheHits}`,
    "",
  ].join("\n");
