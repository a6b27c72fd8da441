// Upstream flags whose fields this proxy keeps (config/recorded.ts) and validates but does not act on: each is
// named in one log line at start, with why nothing happens, and written back by --write-config-to and /configz.
import type { Kind } from "@switchyard/kube/flags";
import type { ProxyConfig } from "../config/config.js";
import { isQuantity, parseVModule, type RecordedConfig } from "../config/recorded.js";
import { INT32, type ProxyFlag, type ProxyFlags } from "./proxy-flags.js";

/** A resource.Quantity flag (the log buffers), as component-base reads one. */
const QUANTITY: Kind = {
  type: "quantity",
  read: (raw: string) => (isQuantity(raw) ? raw : undefined),
  invalid: "want a quantity such as 512, 1Ki or 2M",
};

const VMODULE: Kind = {
  type: "pattern=N,...",
  read: (raw: string) => {
    const items = parseVModule(raw);
    return typeof items === "string" ? undefined : items;
  },
  invalid: "want pattern=N entries, comma-separated",
};

type Set<K extends keyof ProxyFlags> = (r: RecordedConfig, value: NonNullable<ProxyFlags[K]>) => void;

/**
 * One flag whose value `set` writes into the recorded fields. `logging`: applied over a --config file too, as
 * upstream's copyLogsFromFlags applies the logging flags.
 */
function kept<K extends keyof ProxyFlags>(
  [name, kind, field, help, notActedOn]: [string, Kind, K, string, string],
  set: Set<K>,
  logging = false,
): ProxyFlag {
  // The kind and field match by construction of each row below; the union type cannot see that through K.
  return {
    name,
    kind,
    field,
    help,
    notActedOn,
    ...(logging ? { overridesConfig: true } : {}),
    toConfig: (c: ProxyConfig, value: NonNullable<ProxyFlags[K]>) => set(c.recorded, value),
  } as ProxyFlag;
}

export const RECORDED_FLAGS: readonly ProxyFlag[] = [
  kept(
    [
      "config-sync-period",
      "duration",
      "configSyncPeriodMs",
      "How often informers resync (default 15m).",
      "watches are not resynced on a timer",
    ],
    (r, ms) => {
      r.configSyncPeriodMs = ms;
    },
  ),
  kept(
    [
      "kube-api-qps",
      "float",
      "kubeApiQps",
      "QPS to the apiserver (default 5).",
      "requests are not rate-limited",
    ],
    (r, qps) => {
      r.clientConnection.qps = qps;
    },
  ),
  kept(
    [
      "kube-api-burst",
      INT32,
      "kubeApiBurst",
      "Burst to the apiserver (default 10).",
      "requests are not rate-limited",
    ],
    (r, burst) => {
      r.clientConnection.burst = burst;
    },
  ),
  kept(
    [
      "kube-api-content-type",
      "string",
      "kubeApiContentType",
      "Content type of requests to the apiserver.",
      "the client speaks JSON",
    ],
    (r, type) => {
      r.clientConnection.contentType = type;
    },
  ),
  kept(["profiling", "bool", "profiling", "Serve /debug/pprof.", "there is no pprof handler"], (r, on) => {
    r.enableProfiling = on;
  }),
  kept(
    [
      "show-hidden-metrics-for-version",
      "string",
      "showHiddenMetricsForVersion",
      "Show metrics hidden since this version.",
      "no metric is hidden",
    ],
    (r, version) => {
      r.showHiddenMetricsForVersion = version;
    },
  ),
  kept(
    [
      "logging-format",
      "string",
      "loggingFormat",
      "text (upstream's default) or json.",
      "logs are always JSON lines",
    ],
    (r, format) => {
      r.logging.format = format;
    },
    true,
  ),
  kept(
    ["vmodule", VMODULE, "vmodule", "Per-file verbosity (pattern=N,...).", "verbosity is global (--v)"],
    (r, items) => {
      r.logging.vmodule = items;
    },
    true,
  ),
  kept(
    [
      "log-flush-frequency",
      "duration",
      "logFlushFrequencyMs",
      "How often logs are flushed.",
      "every line is written at once",
    ],
    (r, ms) => {
      r.logging.flushFrequencyMs = ms;
    },
    true,
  ),
  ...(["text", "json"] as const).flatMap((stream) => {
    const Stream = stream === "text" ? "Text" : "Json";
    const named = stream === "text" ? "text" : "JSON";
    return [
      kept(
        [
          `log-${stream}-split-stream`,
          "bool",
          `log${Stream}SplitStream`,
          `Split ${named} logs between stdout and stderr (LoggingAlphaOptions).`,
          "logs are JSON lines on stderr",
        ],
        (r, split) => {
          r.logging[stream].splitStream = split;
        },
        true,
      ),
      kept(
        [
          `log-${stream}-info-buffer-size`,
          QUANTITY,
          `log${Stream}InfoBufferSize`,
          `Buffer size of ${named} info logs (LoggingAlphaOptions).`,
          "logs are not buffered",
        ],
        (r, size) => {
          r.logging[stream].infoBufferSize = size;
        },
        true,
      ),
    ];
  }),
];
