import type { LabelSelector } from "./label-selector.js";

/** The kubernetes plugin's settings, as parsed from its Corefile stanza. */
export interface KubernetesOptions {
  /** Zones served, normalised; at least one is not a reverse zone. */
  zones: string[];
  /** The first non-reverse zone: the suffix of PTR targets. */
  primaryZone: string;
  podMode: "disabled" | "insecure" | "verified";
  /** TTL of every record except the dns-version TXT. 0-3600, default 5. */
  ttl: number;
  /** Exposed namespaces; empty means all. */
  namespaces: ReadonlySet<string>;
  /** `labels EXPRESSION`: only Services and EndpointSlices (and pods, for `pods verified`) matching it are watched. */
  labelSelector?: LabelSelector;
  /** `namespace_labels EXPRESSION`: only namespaces matching it are watched, so only they exist. */
  namespaceLabelSelector?: LabelSelector;
  endpointPodNames: boolean;
  ignoreEmptyService: boolean;
  /** false with `noendpoints`: no endpoint data, every endpoint and headless name is NXDOMAIN. */
  endpoints: boolean;
  /** Zones where a name error goes to the next plugin; undefined when fallthrough is off, [] for all. */
  fallthrough?: string[];
  startupTimeoutMs: number;
  /** `kubeconfig PATH [CONTEXT]`: wins over `endpoint`, as in CoreDNS. */
  kubeconfig?: { path: string; context?: string };
  /** `endpoint URL`: an API server reached without a kubeconfig (with `tls` for client certificates). */
  endpoint?: string;
  /** `tls CERT KEY CACERT` for `endpoint`. */
  tls?: { cert: string; key: string; ca: string };
  /** The server's own addresses, for NS glue and `ns.dns.<zone>`; CoreDNS finds them from its pod IP. */
  selfAddresses: string[];
}

export const DEFAULT_TTL = 5;
export const DNS_SCHEMA_VERSION = "1.1.0";

export function defaultOptions(zones: string[]): KubernetesOptions {
  return {
    zones,
    primaryZone: zones.find((z) => !isReverseZone(z)) ?? "",
    podMode: "disabled",
    ttl: DEFAULT_TTL,
    namespaces: new Set(),
    endpointPodNames: false,
    ignoreEmptyService: false,
    endpoints: true,
    startupTimeoutMs: 5000,
    selfAddresses: [],
  };
}

export function isReverseZone(zone: string): boolean {
  return /(^|\.)(in-addr|ip6)\.arpa\.?$/i.test(zone);
}
