// kube-proxy's command line, with upstream's flag names. As upstream, flags fill the
// configuration only when there is no --config; with one, only --hostname-override and the
// logging flag (--v) still apply, and the other flags given are reported as ignored.

import { isIP } from "node:net";
import { parseGoDuration } from "@switchyard/kube";
import { masterURL } from "../client-config.js";
import { appendPortIfNeeded, DEFAULT_PORTS, defaultConfig, type ProxyConfig } from "../config/config.js";

/** A bad command line; main prints the message on one line and exits 2. */
export class FlagError extends Error {
  override name = "FlagError";
}

export interface CommandLine {
  /** --config path, if any. */
  readonly configFile: string | undefined;
  readonly cleanup: boolean;
  /** --init-only: apply the node settings that need root, then exit. */
  readonly initOnly: boolean;
  /** --master: the API server's address, replacing the kubeconfig's server; "" when not given. */
  readonly master: string;
  readonly help: boolean;
  /** --healthz-port and --metrics-port (upstream's defaults when not given). */
  readonly deprecatedPorts: { readonly healthz: number; readonly metrics: number };
  /** --write-config-to path: write the configuration there and exit. */
  readonly writeConfigTo: string | undefined;
  /** --version: "" when not asked, "true" or "raw". */
  readonly version: "" | "true" | "raw";
  /** Names of the flags given (without dashes), in order. */
  readonly given: readonly string[];
  /** Writes the flags given into a config: all of them without --config, the survivors with it. */
  apply(config: ProxyConfig, withConfigFile: boolean): ProxyConfig;
}

type Setter = (c: ProxyConfig, raw: string, bad: (why: string) => FlagError) => void;

interface FlagSpec {
  readonly name: string;
  readonly kind: "string" | "bool" | "duration" | "int" | "list";
  readonly help: string;
  /** Applied even when a config file is given (upstream's exceptions). */
  readonly overridesConfig?: boolean;
  readonly set?: Setter;
  /** Accepted as upstream accepts it, but not acted on: why (main logs it once at start). */
  readonly notActedOn?: string;
  /** Checks the value of a flag that sets nothing in the config. */
  readonly check?: (raw: string, bad: (why: string) => FlagError) => void;
}

const ms = (raw: string, bad: (why: string) => FlagError): number => {
  const v = parseGoDuration(raw);
  if (v === undefined || v < 0) throw bad("want a non-negative duration such as 1s or 30s");
  return v;
};
const bool = (raw: string, bad: (why: string) => FlagError): boolean => {
  if (raw === "true" || raw === "1") return true;
  if (raw === "false" || raw === "0") return false;
  throw bad("want true or false");
};
const count = (raw: string, bad: (why: string) => FlagError): number => {
  if (!/^\d+$/.test(raw) || Number(raw) > 2 ** 31 - 1) throw bad("want a non-negative integer");
  return Number(raw);
};
/**
 * An IP or IP:port, or "" to disable, as upstream's IPPortVar takes it. A bare IP gets its port from
 * --healthz-port/--metrics-port (their defaults otherwise) when the proxy runs; see withDeprecatedPorts.
 */
const hostPort = (raw: string, bad: (why: string) => FlagError): string => {
  const hp = parseHostPort(raw);
  const ok = raw === "" || isIP(raw) !== 0 || (hp !== undefined && isIP(hp.host) !== 0);
  if (!ok) throw bad("want IP or IP:port, or empty to disable");
  return raw;
};

/** What upstream's validation accepts for ipvs.scheduler. */
const IPVS_SCHEDULERS = ["rr", "wrr", "lc", "wlc", "lblc", "lblcr", "sh", "dh", "sed", "nq", "mh"];

/** Flags whose only effect is a check and a log line. */
const accepted = (name: string, kind: FlagSpec["kind"], help: string, notActedOn: string): FlagSpec => ({
  name,
  kind,
  help,
  notActedOn,
});

const portCheck = (raw: string, bad: (why: string) => FlagError) => {
  if (count(raw, bad) > 65535) throw bad("want a port from 0 to 65535");
};

/** Upstream flags with nothing to act on here: name, kind, help, and why nothing happens. */
const ACCEPTED: readonly [string, FlagSpec["kind"], string, string][] = [
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

/**
 * The rest of kube-proxy v1.37.2's flags (cmd/kube-proxy/app/options.go AddFlags, and component-base's logging
 * flags), so that an upstream DaemonSet's command line runs: each applied where it means something here, and
 * otherwise accepted, checked as upstream checks it, and named in one log line at start.
 */
const UPSTREAM_EXTRA_FLAGS: readonly FlagSpec[] = [
  {
    name: "detect-local-mode",
    kind: "string",
    help: "How local traffic is told apart: ClusterCIDR (default), NodeCIDR, BridgeInterface or InterfaceNamePrefix.",
    set: (c, raw, bad) => {
      if (!["ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix"].includes(raw))
        throw bad("want ClusterCIDR, NodeCIDR, BridgeInterface or InterfaceNamePrefix");
      c.detectLocalMode = raw as ProxyConfig["detectLocalMode"];
    },
  },
  {
    name: "pod-bridge-interface",
    kind: "string",
    help: "With --detect-local-mode=BridgeInterface: traffic from this bridge is local.",
    set: (c, raw) => {
      c.detectLocal.bridgeInterface = raw;
    },
  },
  {
    name: "pod-interface-name-prefix",
    kind: "string",
    help: "With --detect-local-mode=InterfaceNamePrefix: traffic from interfaces with this prefix is local.",
    set: (c, raw) => {
      c.detectLocal.interfaceNamePrefix = raw;
    },
  },
  {
    name: "oom-score-adj",
    kind: "int",
    help: "The process's oom_score_adj, -1000..1000 (default -999, as upstream).",
    set: (c, raw, bad) => {
      const n = Number(raw);
      if (!/^-?\d+$/.test(raw) || n < -1000 || n > 1000) throw bad("must be an integer from -1000 to 1000");
      c.oomScoreAdj = n;
    },
  },
  {
    name: "healthz-port",
    kind: "int",
    help: "Deprecated: 0 disables healthz; else the port of a --healthz-bind-address given without one.",
    check: portCheck,
  },
  {
    name: "metrics-port",
    kind: "int",
    help: "Deprecated: 0 disables metrics; else the port of a --metrics-bind-address given without one.",
    check: portCheck,
  },
  {
    name: "feature-gates",
    kind: "string",
    help: "key=true|false pairs, comma-separated.",
    notActedOn: "no feature gate changes this proxy's behaviour",
    check: (raw, bad) => {
      for (const pair of raw.split(",").filter((p) => p.trim() !== ""))
        if (!/^\s*[A-Za-z0-9]+=(true|false)\s*$/i.test(pair)) throw bad(`"${pair}" is not Name=true|false`);
    },
  },
  ...ACCEPTED.map(([name, kind, help, why]) => accepted(name, kind, help, why)),
];

const SPEC: readonly FlagSpec[] = [
  {
    name: "config",
    kind: "string",
    help: "Path to a KubeProxyConfiguration file; most flags are then ignored.",
  },
  {
    name: "proxy-mode",
    kind: "string",
    help: "iptables (default), nftables or ipvs.",
    set: (c, raw, bad) => {
      if (!["", "iptables", "nftables", "ipvs"].includes(raw)) throw bad("want iptables, nftables or ipvs");
      c.mode = raw as ProxyConfig["mode"];
    },
  },
  {
    name: "hostname-override",
    kind: "string",
    help: "The Node name to act for, instead of the hostname.",
    overridesConfig: true,
    set: (c, raw, bad) => {
      if (raw.trim() === "") throw bad("must not be empty");
      c.hostnameOverride = raw.trim().toLowerCase();
    },
  },
  {
    name: "cluster-cidr",
    kind: "string",
    help: "Pod CIDR(s), comma-separated; traffic from outside is masqueraded.",
    set: (c, raw) => {
      c.clusterCIDR = raw;
    },
  },
  {
    name: "kubeconfig",
    kind: "string",
    help: "Path to a kubeconfig; in-cluster config when unset.",
    set: (c, raw) => {
      c.kubeconfig = raw;
    },
  },
  {
    name: "bind-address",
    kind: "string",
    help: "Overrides the node's primary IP (nothing binds to it).",
    set: (c, raw) => {
      c.bindAddress = raw;
    },
  },
  {
    name: "bind-address-hard-fail",
    kind: "bool",
    help: "Exit when the metrics or healthz port cannot be bound (else it is retried every 5s).",
    set: (c, raw, bad) => {
      c.bindAddressHardFail = bool(raw, bad);
    },
  },
  { name: "cleanup", kind: "bool", help: "Remove every rule any mode wrote, then exit." },
  {
    // Not a config field upstream (an Options field), so it applies with --config too.
    name: "init-only",
    kind: "bool",
    help: "Read the Node, apply the kernel settings that need root (conntrack, IPVS, route_localnet), then exit.",
  },
  {
    // As --init-only, an Options field upstream: a --config file does not replace it.
    name: "master",
    kind: "string",
    help: "The API server's address (URL, or host:port for plain http), overriding the kubeconfig's server.",
    check: (raw, bad) => {
      if (raw !== "" && masterURL(raw) === undefined)
        throw bad("want a URL such as https://10.0.0.1:6443, or host:port");
    },
  },
  {
    name: "write-config-to",
    kind: "string",
    help: "Write the configuration (defaults and flags, or the --config file) to this file and exit.",
  },
  {
    name: "version",
    kind: "bool",
    help: "Print the version and exit (--version=raw for details).",
    check: (raw, bad) => {
      if (!["true", "false", "1", "0", "raw"].includes(raw)) throw bad("want true, false or raw");
    },
  },
  {
    name: "metrics-bind-address",
    kind: "string",
    help: "host:port for /metrics (default 127.0.0.1:10249, loopback only, as upstream); empty disables.",
    set: (c, raw, bad) => {
      c.metricsBindAddress = hostPort(raw, bad);
    },
  },
  {
    name: "healthz-bind-address",
    kind: "string",
    help: "host:port for /healthz and /livez (default 0.0.0.0:10256, as upstream); empty disables.",
    set: (c, raw, bad) => {
      c.healthzBindAddress = hostPort(raw, bad);
    },
  },
  {
    name: "nodeport-addresses",
    kind: "list",
    help: "CIDRs or 'primary' whose node IPs accept NodePorts (default: all in iptables, primary in nftables).",
    set: (c, raw) => {
      c.nodePortAddresses = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
    },
  },
  {
    name: "masquerade-all",
    kind: "bool",
    help: "SNAT all traffic to ClusterIPs.",
    set: (c, raw, bad) => {
      c.iptables.masqueradeAll = c.nftables.masqueradeAll = bool(raw, bad);
    },
  },
  {
    name: "iptables-masquerade-bit",
    kind: "int",
    help: "Packet-mark bit that requests SNAT (0..31, default 14).",
    set: (c, raw, bad) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n > 31) throw bad("must be an integer from 0 to 31");
      c.iptables.masqueradeBit = c.nftables.masqueradeBit = n;
    },
  },
  {
    name: "iptables-localhost-nodeports",
    kind: "bool",
    help: "Accept NodePorts on 127.0.0.1 in iptables mode (default true).",
    set: (c, raw, bad) => {
      c.iptables.localhostNodePorts = bool(raw, bad);
    },
  },
  {
    // Upstream's generic minSyncPeriod: iptables and nftables mode both (options.go processV1Alpha1Flags).
    name: "iptables-min-sync-period",
    kind: "duration",
    help: "Minimum time between rule syncs in iptables and nftables mode (default 1s).",
    set: (c, raw, bad) => {
      c.iptables.minSyncPeriodMs = c.nftables.minSyncPeriodMs = ms(raw, bad);
    },
  },
  {
    name: "iptables-sync-period",
    kind: "duration",
    help: "Full resync interval in iptables and nftables mode (default 30s).",
    set: (c, raw, bad) => {
      c.iptables.syncPeriodMs = c.nftables.syncPeriodMs = ms(raw, bad);
    },
  },
  {
    name: "nftables-min-sync-period",
    kind: "duration",
    help: "Minimum time between nftables syncs (default 1s).",
    set: (c, raw, bad) => {
      c.nftables.minSyncPeriodMs = ms(raw, bad);
    },
  },
  {
    name: "nftables-sync-period",
    kind: "duration",
    help: "Retry interval after a failed nftables sync (default 30s).",
    set: (c, raw, bad) => {
      c.nftables.syncPeriodMs = ms(raw, bad);
    },
  },
  {
    name: "ipvs-scheduler",
    kind: "string",
    help: "IPVS scheduler: rr (default), wrr, lc, wlc, lblc, lblcr, sh, dh, sed, nq or mh.",
    set: (c, raw, bad) => {
      if (raw !== "" && !IPVS_SCHEDULERS.includes(raw))
        throw bad(`want one of ${IPVS_SCHEDULERS.join(", ")}`);
      c.ipvs.scheduler = raw;
    },
  },
  {
    name: "ipvs-min-sync-period",
    kind: "duration",
    help: "Minimum time between IPVS syncs (default 0s).",
    set: (c, raw, bad) => {
      c.ipvs.minSyncPeriodMs = ms(raw, bad);
    },
  },
  {
    name: "ipvs-sync-period",
    kind: "duration",
    help: "Retry interval after a failed IPVS sync (default 30s).",
    set: (c, raw, bad) => {
      c.ipvs.syncPeriodMs = ms(raw, bad);
    },
  },
  {
    name: "ipvs-exclude-cidrs",
    kind: "list",
    help: "CIDRs whose IPVS virtual servers kube-proxy leaves alone, comma-separated.",
    set: (c, raw, bad) => {
      const cidrs = raw
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      for (const cidr of cidrs)
        if (!/^[0-9a-fA-F.:]+\/\d{1,3}$/.test(cidr)) throw bad(`"${cidr}" is not a CIDR`);
      c.ipvs.excludeCIDRs = cidrs;
    },
  },
  {
    name: "ipvs-strict-arp",
    kind: "bool",
    help: "Set arp_ignore=1 and arp_announce=2, so the node does not answer ARP for Service VIPs.",
    set: (c, raw, bad) => {
      c.ipvs.strictARP = bool(raw, bad);
    },
  },
  {
    name: "ipvs-tcp-timeout",
    kind: "duration",
    help: "Timeout of idle IPVS TCP connections (0 leaves the kernel's).",
    set: (c, raw, bad) => {
      c.ipvs.tcpTimeoutMs = ms(raw, bad);
    },
  },
  {
    name: "ipvs-tcpfin-timeout",
    kind: "duration",
    help: "Timeout of IPVS TCP connections after FIN (0 leaves the kernel's).",
    set: (c, raw, bad) => {
      c.ipvs.tcpFinTimeoutMs = ms(raw, bad);
    },
  },
  {
    name: "ipvs-udp-timeout",
    kind: "duration",
    help: "Timeout of IPVS UDP flows (0 leaves the kernel's).",
    set: (c, raw, bad) => {
      c.ipvs.udpTimeoutMs = ms(raw, bad);
    },
  },
  {
    name: "conntrack-max-per-core",
    kind: "int",
    help: "nf_conntrack_max per CPU (default 32768; 0 leaves the kernel's limit).",
    set: (c, raw, bad) => {
      c.conntrack.maxPerCore = count(raw, bad);
    },
  },
  {
    name: "conntrack-min",
    kind: "int",
    help: "Lower bound of nf_conntrack_max (default 131072).",
    set: (c, raw, bad) => {
      c.conntrack.min = count(raw, bad);
    },
  },
  {
    name: "conntrack-tcp-timeout-established",
    kind: "duration",
    help: "nf_conntrack_tcp_timeout_established (default 24h; 0 leaves the kernel's).",
    set: (c, raw, bad) => {
      c.conntrack.tcpEstablishedTimeoutMs = ms(raw, bad);
    },
  },
  {
    name: "conntrack-tcp-timeout-close-wait",
    kind: "duration",
    help: "nf_conntrack_tcp_timeout_close_wait (default 1h; 0 leaves the kernel's).",
    set: (c, raw, bad) => {
      c.conntrack.tcpCloseWaitTimeoutMs = ms(raw, bad);
    },
  },
  {
    name: "conntrack-tcp-be-liberal",
    kind: "bool",
    help: "Set nf_conntrack_tcp_be_liberal=1 (and then drop no INVALID packets in iptables mode).",
    set: (c, raw, bad) => {
      c.conntrack.tcpBeLiberal = bool(raw, bad);
    },
  },
  {
    name: "conntrack-udp-timeout",
    kind: "duration",
    help: "nf_conntrack_udp_timeout (0, the default, leaves the kernel's).",
    set: (c, raw, bad) => {
      c.conntrack.udpTimeoutMs = ms(raw, bad);
    },
  },
  {
    name: "conntrack-udp-timeout-stream",
    kind: "duration",
    help: "nf_conntrack_udp_timeout_stream (0, the default, leaves the kernel's).",
    set: (c, raw, bad) => {
      c.conntrack.udpStreamTimeoutMs = ms(raw, bad);
    },
  },
  {
    name: "v",
    kind: "int",
    help: "Log verbosity; 0 is quiet.",
    overridesConfig: true,
    set: (c, raw, bad) => {
      const n = Number(raw);
      if (!/^\d+$/.test(raw) || n > 10) throw bad("must be an integer from 0 to 10");
      c.verbosity = n;
    },
  },
  ...UPSTREAM_EXTRA_FLAGS,
  { name: "help", kind: "bool", help: "Print this help." },
];

/** Parses --name=value, --name value, bare booleans and -v=2; `_` in a name reads as `-`, as upstream's flag set. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const values: [FlagSpec, string][] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const m = /^--?([a-z][a-z0-9_-]*)(?:=(.*))?$/s.exec(arg);
    if (m === null) throw new FlagError(`unexpected argument "${arg}": this command takes flags only`);
    const name = (m[1] ?? "").replaceAll("_", "-");
    const flag = SPEC.find((f) => f.name === name);
    if (flag === undefined) throw new FlagError(`unknown flag: --${name}`);
    let raw = m[2];
    if (raw === undefined) {
      if (flag.kind === "bool") raw = "true";
      else {
        raw = argv[++i];
        if (raw === undefined) throw new FlagError(`flag needs an argument: --${name}`);
      }
    }
    values.push([flag, raw]);
  }
  const bad = (flag: FlagSpec, raw: string) => (why: string) =>
    new FlagError(`invalid value "${raw}" for flag --${flag.name}: ${why}`);
  // Check every value now, so a bad flag fails before anything starts.
  for (const [flag, raw] of values) {
    if (flag.kind === "bool" && !flag.check) bool(raw, bad(flag, raw));
    if (flag.kind === "int" && !flag.set) count(raw, bad(flag, raw));
    if (flag.kind === "duration" && !flag.set) ms(raw, bad(flag, raw));
    flag.check?.(raw, bad(flag, raw));
    flag.set?.(defaultConfig(), raw, bad(flag, raw));
  }
  const last = (name: string) => values.filter(([f]) => f.name === name).at(-1)?.[1];
  const isTrue = (name: string) => last(name) === "true" || last(name) === "1";
  return {
    configFile: last("config"),
    writeConfigTo: last("write-config-to"),
    deprecatedPorts: {
      healthz: Number(last("healthz-port") ?? DEFAULT_PORTS.healthzBindAddress),
      metrics: Number(last("metrics-port") ?? DEFAULT_PORTS.metricsBindAddress),
    },
    cleanup: isTrue("cleanup"),
    initOnly: isTrue("init-only"),
    master: last("master") ?? "",
    help: isTrue("help"),
    version: last("version") === "raw" ? "raw" : isTrue("version") ? "true" : "",
    given: values.map(([f]) => f.name),
    apply(config, withConfigFile) {
      const c = structuredClone(config);
      for (const [flag, raw] of values) {
        if (withConfigFile && !flag.overridesConfig) continue;
        flag.set?.(c, raw, bad(flag, raw));
      }
      return c;
    },
  };
}

/** Flags given that are accepted but not acted on, with why: "--profiling (there is no pprof handler)". */
export function notActedOn(cl: CommandLine): string[] {
  return [...new Set(cl.given)].flatMap((name) => {
    const why = SPEC.find((s) => s.name === name)?.notActedOn;
    return why ? [`--${name} (${why})`] : [];
  });
}

/** Flags given that a config file makes ineffective (upstream ignores them silently). */
export function ignoredWithConfig(cl: CommandLine): string[] {
  return cl.given.filter((name) => {
    const f = SPEC.find((s) => s.name === name);
    return f?.set !== undefined && !f.overridesConfig;
  });
}

/** Splits "host:port" ("[::1]:10249" for IPv6); undefined when malformed. */
export function parseHostPort(address: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(address);
  const port = Number(m?.[3]);
  if (m === null || port > 65535) return undefined;
  return { host: m[1] ?? m[2] ?? "", port };
}

export function usage(program: string): string {
  const lines = SPEC.map((f) => {
    const value = f.kind === "bool" ? "" : ` ${f.kind}`;
    return `  --${f.name}${value}\n      ${f.help}`;
  });
  return `Usage: ${program} [flags]\n\n${lines.join("\n")}\n`;
}

/**
 * Upstream's Complete() without a config file and without --write-config-to: --healthz-port/--metrics-port 0
 * disables that server, and a bind address given without a port gets the flag's port (their defaults when
 * unset), so `--metrics-bind-address=0.0.0.0` serves on 0.0.0.0:10249.
 */
export function withDeprecatedPorts(c: ProxyConfig, ports: CommandLine["deprecatedPorts"]): ProxyConfig {
  const address = (addr: string, port: number) => (port === 0 ? "" : appendPortIfNeeded(addr, port));
  return {
    ...c,
    healthzBindAddress: address(c.healthzBindAddress, ports.healthz),
    metricsBindAddress: address(c.metricsBindAddress, ports.metrics),
  };
}

/** Upstream's validation of the two server addresses: IP:port or empty ("must be IP:port"). */
export function validateServerAddresses(c: ProxyConfig): void {
  for (const [field, value] of [
    ["HealthzBindAddress", c.healthzBindAddress],
    ["MetricsBindAddress", c.metricsBindAddress],
  ] as const) {
    const hp = parseHostPort(value);
    if (value !== "" && (hp === undefined || isIP(hp.host) === 0))
      throw new FlagError(
        `KubeProxyConfiguration.${field}: Invalid value: ${JSON.stringify(value)}: must be IP:port`,
      );
  }
}
