// kube-proxy's command line, with upstream's flag names. As upstream, flags fill the
// configuration only when there is no --config; with one, only --hostname-override and the
// logging flag (--v) still apply, and the other flags given are reported as ignored.

import { parseGoDuration } from "@switchyard/kube";
import { defaultConfig, type ProxyConfig } from "../config/config.js";

/** A bad command line; main prints the message on one line and exits 2. */
export class FlagError extends Error {
  override name = "FlagError";
}

export interface CommandLine {
  /** --config path, if any. */
  readonly configFile: string | undefined;
  readonly cleanup: boolean;
  readonly help: boolean;
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
const hostPort = (raw: string, bad: (why: string) => FlagError): string => {
  if (raw !== "" && parseHostPort(raw) === undefined) throw bad("want host:port, or empty to disable");
  return raw;
};

/** What upstream's validation accepts for ipvs.scheduler. */
const IPVS_SCHEDULERS = ["rr", "wrr", "lc", "wlc", "lblc", "lblcr", "sh", "dh", "sed", "nq", "mh"];

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
  { name: "cleanup", kind: "bool", help: "Remove every rule any mode wrote, then exit." },
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
    name: "iptables-min-sync-period",
    kind: "duration",
    help: "Minimum time between iptables syncs (default 1s).",
    set: (c, raw, bad) => {
      c.iptables.minSyncPeriodMs = ms(raw, bad);
    },
  },
  {
    name: "iptables-sync-period",
    kind: "duration",
    help: "Retry interval after a failed iptables sync (default 30s).",
    set: (c, raw, bad) => {
      c.iptables.syncPeriodMs = ms(raw, bad);
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
  { name: "help", kind: "bool", help: "Print this help." },
];

/** Parses --name=value, --name value, bare booleans and -v=2. */
export function parseCommandLine(argv: readonly string[]): CommandLine {
  const values: [FlagSpec, string][] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i] ?? "";
    const m = /^--?([a-z][a-z0-9-]*)(?:=(.*))?$/s.exec(arg);
    if (m === null) throw new FlagError(`unexpected argument "${arg}": this command takes flags only`);
    const name = m[1] ?? "";
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
    if (flag.kind === "bool") bool(raw, bad(flag, raw));
    flag.set?.(defaultConfig(), raw, bad(flag, raw));
  }
  const last = (name: string) => values.filter(([f]) => f.name === name).at(-1)?.[1];
  const isTrue = (name: string) => last(name) === "true" || last(name) === "1";
  return {
    configFile: last("config"),
    cleanup: isTrue("cleanup"),
    help: isTrue("help"),
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
