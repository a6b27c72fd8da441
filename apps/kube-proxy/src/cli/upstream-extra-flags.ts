import type { ProxyConfig } from "../config/config.js";
import { count, nonNegativeDuration, oneOf, type ProxyFlag } from "./proxy-flags.js";

type AcceptedKind = "string" | "bool" | "duration" | "int";

/** How each kind of accepted flag is read: as upstream, so a value it refuses is refused here too. */
const READ_AS = {
  string: { kind: "string" },
  bool: { kind: "bool" },
  duration: nonNegativeDuration,
  int: count,
} as const;

/** Upstream flags with nothing to act on here: name, kind, help, and why nothing happens. */
const ACCEPTED: readonly [string, AcceptedKind, string, string][] = [
  [
    "config-sync-period",
    "duration",
    "How often informers resync (default 15m).",
    "watches are not resynced on a timer",
  ],
  ["kube-api-qps", "string", "QPS to the apiserver (default 5).", "requests are not rate-limited"],
  ["kube-api-burst", "int", "Burst to the apiserver (default 10).", "requests are not rate-limited"],
  ["kube-api-content-type", "string", "Content type of requests to the apiserver.", "the client speaks JSON"],
  ["profiling", "bool", "Serve /debug/pprof.", "there is no pprof handler"],
  [
    "show-hidden-metrics-for-version",
    "string",
    "Show metrics hidden since this version.",
    "no metric is hidden",
  ],
  ["logging-format", "string", "text (upstream's default) or json.", "logs are always JSON lines"],
  ["vmodule", "string", "Per-file verbosity (pattern=N,...).", "verbosity is global (--v)"],
  ["log-flush-frequency", "duration", "How often logs are flushed.", "every line is written at once"],
  [
    "log-text-split-stream",
    "bool",
    "Split text logs between stdout and stderr.",
    "logs are JSON lines on stderr",
  ],
  ["log-text-info-buffer-size", "string", "Buffer size of text info logs.", "logs are not buffered"],
  ["log-json-split-stream", "bool", "Split JSON logs between stdout and stderr.", "logs go to stderr"],
  ["log-json-info-buffer-size", "string", "Buffer size of JSON info logs.", "logs are not buffered"],
];

const PORT = {
  ...count,
  check: (port: number) => (port > 65535 ? "want a port from 0 to 65535" : undefined),
};

/**
 * The rest of kube-proxy v1.37.2's flags (cmd/kube-proxy/app/options.go AddFlags, and component-base's logging
 * flags), so that an upstream DaemonSet's command line runs: each applied where it means something here, and
 * otherwise accepted, checked as upstream checks it, and named in one log line at start.
 */
export const UPSTREAM_EXTRA_FLAGS: readonly ProxyFlag[] = [
  {
    name: "detect-local-mode",
    kind: "string",
    field: "detectLocalMode",
    help: "How local traffic is told apart: ClusterCIDR (default), NodeCIDR, BridgeInterface or InterfaceNamePrefix.",
    check: oneOf(
      ["ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix"],
      "want ClusterCIDR, NodeCIDR, BridgeInterface or InterfaceNamePrefix",
    ),
    toConfig: (c, mode) => {
      c.detectLocalMode = mode as ProxyConfig["detectLocalMode"];
    },
  },
  {
    name: "pod-bridge-interface",
    kind: "string",
    field: "podBridgeInterface",
    help: "With --detect-local-mode=BridgeInterface: traffic from this bridge is local.",
    toConfig: (c, bridge) => {
      c.detectLocal.bridgeInterface = bridge;
    },
  },
  {
    name: "pod-interface-name-prefix",
    kind: "string",
    field: "podInterfaceNamePrefix",
    help: "With --detect-local-mode=InterfaceNamePrefix: traffic from interfaces with this prefix is local.",
    toConfig: (c, prefix) => {
      c.detectLocal.interfaceNamePrefix = prefix;
    },
  },
  {
    name: "oom-score-adj",
    kind: { min: -1000, max: 1000, decimal: true },
    field: "oomScoreAdj",
    help: "The process's oom_score_adj, -1000..1000 (default -999, as upstream).",
    toConfig: (c, score) => {
      c.oomScoreAdj = score;
    },
  },
  {
    name: "healthz-port",
    ...PORT,
    field: "healthzPort",
    help: "Deprecated: 0 disables healthz; else the port of a --healthz-bind-address given without one.",
  },
  {
    name: "metrics-port",
    ...PORT,
    field: "metricsPort",
    help: "Deprecated: 0 disables metrics; else the port of a --metrics-bind-address given without one.",
  },
  {
    name: "feature-gates",
    kind: "string",
    help: "key=true|false pairs, comma-separated.",
    notActedOn: "no feature gate changes this proxy's behaviour",
    check: (gates: string) =>
      gates
        .split(",")
        .filter((p) => p.trim() !== "")
        .map((pair) =>
          /^\s*[A-Za-z0-9]+=(true|false)\s*$/i.test(pair) ? undefined : `"${pair}" is not Name=true|false`,
        )
        .find((why) => why !== undefined),
  },
  ...ACCEPTED.map(
    ([name, kind, help, notActedOn]): ProxyFlag => ({ name, ...READ_AS[kind], help, notActedOn }),
  ),
];
