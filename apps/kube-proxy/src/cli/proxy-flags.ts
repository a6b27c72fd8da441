import type { FieldFlag, IntKind, UnstoredFlag } from "@switchyard/kube/flags";
import type { ProxyConfig } from "../config/config.js";

/** The flags that decide what the program does, rather than what the proxy is configured with. */
export interface CommandFlags {
  config?: string;
  writeConfigTo?: string;
  cleanup: boolean;
  initOnly: boolean;
  /** "" when not given. */
  master: string;
  /** true, false, 1, 0 or raw; absent when not given. */
  version?: string;
  help: boolean;
  healthzPort: number;
  metricsPort: number;
}

/** The flags that fill the configuration: set only when given, then applied onto it (see ProxyFlag.toConfig). */
export interface ConfigFlags {
  proxyMode: string;
  hostnameOverride: string;
  clusterCIDR: string;
  kubeconfig: string;
  bindAddress: string;
  bindAddressHardFail: boolean;
  metricsBindAddress: string;
  healthzBindAddress: string;
  nodePortAddresses: string[];
  masqueradeAll: boolean;
  masqueradeBit: number;
  localhostNodePorts: boolean;
  iptablesMinSyncPeriodMs: number;
  iptablesSyncPeriodMs: number;
  nftablesMinSyncPeriodMs: number;
  nftablesSyncPeriodMs: number;
  ipvsScheduler: string;
  ipvsMinSyncPeriodMs: number;
  ipvsSyncPeriodMs: number;
  ipvsExcludeCIDRs: string[];
  ipvsStrictARP: boolean;
  ipvsTcpTimeoutMs: number;
  ipvsTcpFinTimeoutMs: number;
  ipvsUdpTimeoutMs: number;
  conntrackMaxPerCore: number;
  conntrackMin: number;
  conntrackTcpEstablishedTimeoutMs: number;
  conntrackTcpCloseWaitTimeoutMs: number;
  conntrackTcpBeLiberal: boolean;
  conntrackUdpTimeoutMs: number;
  conntrackUdpStreamTimeoutMs: number;
  verbosity: number;
  detectLocalMode: string;
  podBridgeInterface: string;
  podInterfaceNamePrefix: string;
  oomScoreAdj: number;
}

export type ProxyFlags = CommandFlags & Partial<ConfigFlags>;

interface ProxyFlagExtras {
  /** Applied even when a config file is given (upstream's exceptions). */
  readonly overridesConfig?: boolean;
  /** Accepted as upstream accepts it, but not acted on: why (main logs it once at start). */
  readonly notActedOn?: string;
}

/** One kube-proxy flag: the engine's declaration, plus where its value goes in a configuration. */
export type ProxyFlag =
  | {
      [K in keyof ProxyFlags]-?: FieldFlag<ProxyFlags, K> &
        ProxyFlagExtras & {
          readonly toConfig?: (c: ProxyConfig, value: Exclude<ProxyFlags[K], undefined>) => void;
        };
    }[keyof ProxyFlags]
  | (UnstoredFlag & ProxyFlagExtras & { readonly toConfig?: undefined });

/** A flag whose value goes to the configuration field of the same name, as it is. */
export function sameField<K extends keyof ConfigFlags & keyof ProxyConfig>(key: K) {
  return (c: ProxyConfig, value: ConfigFlags[K] & ProxyConfig[K]): void => {
    c[key] = value;
  };
}

const NON_NEGATIVE_DURATION = "want a non-negative duration such as 1s or 30s";

/** How kube-proxy has always read a duration: Go's syntax, and never negative. */
export const nonNegativeDuration = {
  kind: "duration",
  invalid: NON_NEGATIVE_DURATION,
  check: (ms: number) => (ms < 0 ? NON_NEGATIVE_DURATION : undefined),
} as const;

/** A count: decimal digits up to int32's largest. */
export const count = {
  kind: { min: 0, max: 2 ** 31 - 1, decimal: true } satisfies IntKind,
  invalid: "want a non-negative integer",
} as const;

/** A check that the value is one of `allowed`, refused with `why`. */
export const oneOf =
  (allowed: readonly string[], why: string) =>
  (value: string): string | undefined =>
    allowed.includes(value) ? undefined : why;
