import type { FieldFlag, IntKind, UnstoredFlag } from "@switchyard/kube/flags";
import type { ProxyConfig } from "../config/config.js";
import type { VModuleItem } from "../config/recorded.js";

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
  featureGates: Record<string, boolean>;
  configSyncPeriodMs: number;
  kubeApiQps: number;
  kubeApiBurst: number;
  kubeApiContentType: string;
  profiling: boolean;
  showHiddenMetricsForVersion: string;
  loggingFormat: string;
  vmodule: VModuleItem[];
  logFlushFrequencyMs: number;
  logTextSplitStream: boolean;
  logTextInfoBufferSize: string;
  logJsonSplitStream: boolean;
  logJsonInfoBufferSize: string;
  cgroupRoot: string;
  bpfRoot: string;
  devices: string[];
  bpfLbMapMax: number;
  bpfLbAcceleration: string;
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

/** pflag's Int32Var: strconv.ParseInt with base 0 (0x1f, 010), any int32; ranges are the validation's job. */
export const INT32 = { min: -(2 ** 31), max: 2 ** 31 - 1 } satisfies IntKind;

/** A check that the value is one of `allowed`, refused with `why`. */
export const oneOf =
  (allowed: readonly string[], why: string) =>
  (value: string): string | undefined =>
    allowed.includes(value) ? undefined : why;
