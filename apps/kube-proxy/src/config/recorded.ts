// The v1alpha1 fields this proxy does not act on (client tuning, profiling, logging options, feature gates, Windows'
// section), kept as given: upstream's validation checks them (config/validate.ts), and --write-config-to and
// /configz write them back as upstream would, so a file or a flag set that upstream refuses is refused here too and
// one it accepts reads back the same.
import { formatGoDuration, parseGoDuration } from "@switchyard/basics";

/** One --vmodule entry: a file pattern and its verbosity. */
export interface VModuleItem {
  filePattern: string;
  verbosity: number;
}

/** logging.options.text / .json (both behind the LoggingAlphaOptions gate). */
export interface StreamOptions {
  splitStream: boolean;
  /** A resource.Quantity as written ("0", "1Ki", "2M"). */
  infoBufferSize: string;
}

export interface RecordedConfig {
  featureGates: Record<string, boolean>;
  clientConnection: { acceptContentTypes: string; contentType: string; qps: number; burst: number };
  enableProfiling: boolean;
  showHiddenMetricsForVersion: string;
  configSyncPeriodMs: number;
  logging: {
    format: string;
    flushFrequencyMs: number;
    /** Given as nanoseconds in a file, and so written back as nanoseconds. */
    flushFrequencyAsNanos: boolean;
    vmodule: VModuleItem[];
    text: StreamOptions;
    json: StreamOptions;
  };
  winkernel: {
    networkName: string;
    sourceVip: string;
    enableDSR: boolean;
    rootHnsEndpointName: string;
    forwardHealthCheckVip: boolean;
  };
}

/** v1alpha1's defaults for these fields (SetDefaults_KubeProxyConfiguration, logsapi's recommended logging). */
export function defaultRecorded(): RecordedConfig {
  return {
    featureGates: {},
    clientConnection: {
      acceptContentTypes: "",
      contentType: "application/vnd.kubernetes.protobuf",
      qps: 5,
      burst: 10,
    },
    enableProfiling: false,
    showHiddenMetricsForVersion: "",
    configSyncPeriodMs: 15 * 60_000,
    logging: {
      format: "text",
      flushFrequencyMs: 5000,
      flushFrequencyAsNanos: false,
      vmodule: [],
      text: { splitStream: false, infoBufferSize: "0" },
      json: { splitStream: false, infoBufferSize: "0" },
    },
    winkernel: {
      networkName: "",
      sourceVip: "",
      enableDSR: false,
      rootHnsEndpointName: "",
      forwardHealthCheckVip: false,
    },
  };
}

/**
 * --vmodule as component-base reads it: comma-separated pattern=N, N decimal up to int32's largest; empty entries
 * (a trailing comma) skipped. A string saying what is wrong when it cannot be read.
 */
export function parseVModule(raw: string): VModuleItem[] | string {
  const items: VModuleItem[] = [];
  for (const entry of raw.split(",")) {
    if (entry === "") continue;
    const parts = entry.split("=");
    const [pattern = "", level = ""] = parts;
    if (parts.length !== 2 || pattern === "" || level === "")
      return `"${entry}" does not have the pattern=N format`;
    if (!/^\d+$/.test(level) || Number(level) > 2 ** 31 - 1)
      return `parsing verbosity in "${entry}": invalid syntax`;
    items.push({ filePattern: pattern, verbosity: Number(level) });
  }
  return items;
}

/** A resource.Quantity: a number, then an optional binary (Ki..Ei) or decimal (k..E, m) suffix or an exponent. */
const QUANTITY = /^[+-]?(\d+\.?\d*|\.\d+)(Ki|Mi|Gi|Ti|Pi|Ei|m|k|M|G|T|P|E|[eE][+-]?\d+)?$/;

export const isQuantity = (raw: string): boolean => QUANTITY.test(raw);
export const isZeroQuantity = (raw: string): boolean => Number(/^[+-]?[\d.]*/.exec(raw)?.[0] ?? "0") === 0;

/** logging.flushFrequency: a duration string or an integer of nanoseconds (TimeOrMetaDuration); ms. */
export function flushFrequencyMs(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isInteger(value)) return value / 1e6;
  return typeof value === "string" ? parseGoDuration(value) : undefined;
}

/** These fields as v1alpha1 writes them (keys sorted by the caller; omitempty ones left out when empty). */
export function recordedV1alpha1(r: RecordedConfig) {
  const stream = (o: StreamOptions) => ({
    infoBufferSize: o.infoBufferSize,
    ...(o.splitStream ? { splitStream: true } : {}),
  });
  return {
    ...(Object.keys(r.featureGates).length > 0 ? { featureGates: { ...r.featureGates } } : {}),
    clientConnection: { ...r.clientConnection },
    configSyncPeriod: formatGoDuration(r.configSyncPeriodMs),
    enableProfiling: r.enableProfiling,
    logging: {
      flushFrequency: r.logging.flushFrequencyAsNanos
        ? r.logging.flushFrequencyMs * 1e6
        : formatGoDuration(r.logging.flushFrequencyMs),
      format: r.logging.format,
      options: { json: stream(r.logging.json), text: stream(r.logging.text) },
      ...(r.logging.vmodule.length > 0 ? { vmodule: r.logging.vmodule.map((v) => ({ ...v })) } : {}),
    },
    // Read from a file but gone from the internal configuration, so always written empty (as upstream).
    portRange: "",
    showHiddenMetricsForVersion: r.showHiddenMetricsForVersion,
    winkernel: { ...r.winkernel },
  };
}
