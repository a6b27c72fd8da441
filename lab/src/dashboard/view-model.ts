// What the dashboard page shows, as data. The server computes it (view.ts) and sends it whole on every change;
// the page (page/, compiled for the browser) only draws it. Types only, so both builds can share this file.

/** A Node and where it stands. */
export interface NodeView {
  name: string;
  /** topology.kubernetes.io/zone, "" when unlabelled. */
  zone: string;
  ready: boolean;
  internalIP: string;
  podCIDR: string;
  /** node-role.kubernetes.io/<role> labels (kind's control-plane node). */
  roles: string[];
}

/** Hints of the ready endpoints: all carry one (proxies use them), some do (proxies ignore them all), or none. */
export type HintState = "all" | "some" | "none";

export interface EndpointView {
  addresses: string[];
  /** targetRef's name when it is a Pod. */
  pod: string;
  node: string;
  zone: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
  /** hints.forZones / hints.forNodes names; undefined when the endpoint has no hints. */
  hints?: { zones: string[]; nodes: string[] };
}

export interface SliceView {
  name: string;
  addressType: string;
  /** endpointslice.kubernetes.io/managed-by */
  managedBy: string;
  ports: string[];
  endpoints: EndpointView[];
  /** Endpoints left out of `endpoints` to keep the page small. */
  hiddenEndpoints: number;
}

export interface EndpointCounts {
  total: number;
  ready: number;
  serving: number;
  terminating: number;
  /** Ready endpoints that carry hints. */
  hinted: number;
}

/** One change point of a Service's timeline: its counts and hint state from `at` until the next sample. */
export interface HintSample extends EndpointCounts {
  at: number;
  hints: HintState;
}

export interface ServiceView {
  namespace: string;
  name: string;
  type: string;
  clusterIP: string;
  ports: string[];
  /** spec.trafficDistribution, or the service.kubernetes.io/topology-mode annotation ("" for neither). */
  topology: string;
  internalTrafficPolicy: string;
  counts: EndpointCounts;
  hints: HintState;
  slices: SliceView[];
  /** Change points, oldest first, since the dashboard started. */
  timeline: HintSample[];
}

/** Rules of ours in the node's kernel, as `migrate` counts them (iptables-legacy, iptables-nft, nftables lines). */
export interface RuleCountsView {
  iptablesLegacy: number;
  iptablesNft: number;
  nftables: number;
}

/** One of ebpf mode's maps and the entries it held after the proxy's last sync. */
export interface BPFMapSize {
  /** The kernel's name: "lb4_services", "lb6_reverse_nat". */
  name: string;
  entries: number;
}

/** Mean sync duration between two scrapes that saw syncs. */
export interface SyncSample {
  at: number;
  meanMs: number;
  syncs: number;
}

export interface ProxyView {
  node: string;
  zone: string;
  /** What the proxy's /proxyMode answers, "" when nothing answered. */
  mode: string;
  /** The last scrape's failure, "" when it worked. */
  error: string;
  rules?: RuleCountsView;
  /** ebpf mode: its maps' sizes (kubeproxy_sync_proxy_rules_bpf_map_entries); empty in the other modes. */
  bpfMaps: BPFMapSize[];
  /** kubeproxy_sync_proxy_rules_last_timestamp_seconds, in ms; undefined before the first sync. */
  lastSyncAt?: number;
  syncs: number;
  syncHistory: SyncSample[];
  /** kubeproxy_network_programming_duration_seconds, since the proxy started. */
  programming: { count: number; p50Ms?: number; p99Ms?: number };
  scrapedAt?: number;
}

export type DnsPodState = "serving" | "not ready" | "lameduck" | "terminating" | "pending";

export interface DnsPodView {
  name: string;
  node: string;
  ip: string;
  state: DnsPodState;
  /** When the lameduck window ends (ms), while the pod is in it. */
  lameduckEndsAt?: number;
  /** coredns_dns_requests_total per second between the last two scrapes. */
  qps?: number;
  /** coredns_cache_hits_total / coredns_cache_requests_total since the pod started. */
  cacheHitRatio?: number;
  requests?: number;
  error: string;
}

export interface DnsView {
  /** `health { lameduck D }` of the coredns ConfigMap's Corefile; "" when it has none. */
  lameduck: string;
  lameduckMs?: number;
  pods: DnsPodView[];
}

export type MigrationNodeState = "pending" | "switching" | "settling" | "switched" | "skipped";

export interface MigrationNodeView {
  name: string;
  state: MigrationNodeState;
  from: string;
  switchSeconds?: number;
  leftovers?: number;
  /** Failed/attempted connections and lookups of every client node while this node switched. */
  tcp?: { failures: number; attempts: number };
  dns?: { failures: number; attempts: number };
}

export interface MigrationView {
  to: string;
  /** "running" while the migrate process lives; "interrupted" when it died before finishing. */
  status: "running" | "done" | "failed" | "interrupted";
  phase: string;
  error: string;
  startedAt: number;
  updatedAt: number;
  nodes: MigrationNodeView[];
  failures: number;
}

export interface Warning {
  /** Stable, for the page and tests: "lameduck". */
  id: string;
  text: string;
}

export interface DashboardView {
  at: number;
  lab: { runtime: "netns" | "kind"; name: string };
  /** "resource: why" for each watch not synced yet; empty once all are. */
  notSynced: string[];
  nodes: NodeView[];
  services: ServiceView[];
  proxies: ProxyView[];
  dns: DnsView;
  migration?: MigrationView;
  warnings: Warning[];
}
