import type { ProxyConfig } from "../config/config.js";
import { INT32, type ProxyFlag } from "./proxy-flags.js";
import { RECORDED_FLAGS } from "./recorded-flags.js";

/** --healthz-port and --metrics-port: any int32, as pflag reads it; the address they make is validated. */
const PORT = { kind: INT32 } as const;

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
    kind: INT32,
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
    kind: "bool-map",
    field: "featureGates",
    help: "key=true|false pairs, comma-separated.",
    notActedOn: "of the feature gates only KubeProxyIPVS and LoggingAlphaOptions change what is accepted",
    toConfig: (c, gates) => {
      c.recorded.featureGates = gates;
    },
  },
  ...RECORDED_FLAGS,
];
