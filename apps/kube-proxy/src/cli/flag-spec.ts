import { isIP } from "node:net";
import { masterFlagError } from "@switchyard/kube";
import { parseHostPort, VERSION_FLAG } from "@switchyard/kube/flags";
import { XDP_ACCELERATIONS, type XdpAcceleration } from "@switchyard/proxier";
import type { ProxyConfig } from "../config/config.js";
import { INT32, oneOf, type ProxyFlag, sameField } from "./proxy-flags.js";
import { UPSTREAM_EXTRA_FLAGS } from "./upstream-extra-flags.js";

/** A flag for a field set only by a non-empty value: upstream's IPVar and IPPortVar take "" as not given. */
const unlessEmpty =
  <K extends "bindAddress" | "healthzBindAddress" | "metricsBindAddress">(key: K) =>
  (c: ProxyConfig, value: string): void => {
    if (value !== "") c[key] = value;
  };

/**
 * An IP or IP:port, or "" (not given), as upstream's IPPortVar takes it. A bare IP gets its port from
 * --healthz-port/--metrics-port (their defaults otherwise) when the proxy runs; see withDeprecatedPorts.
 */
function hostPortCheck(address: string): string | undefined {
  const hp = parseHostPort(address);
  const ok = address === "" || isIP(address) !== 0 || (hp !== undefined && isIP(hp.host) !== 0);
  return ok ? undefined : "want IP or IP:port";
}

const nonEmpty = (items: readonly string[]) => items.filter((s) => s !== "");

/** kube-proxy's flags, in the order help lists them. */
export const SPEC: readonly ProxyFlag[] = [
  {
    name: "config",
    kind: "string",
    field: "config",
    help: "Path to a KubeProxyConfiguration file; most flags are then ignored.",
  },
  {
    name: "proxy-mode",
    kind: "string",
    field: "proxyMode",
    help: "iptables (default), nftables or ipvs; or ebpf, which is not an upstream mode (BPF socket-level balancing, as Cilium's kube-proxy replacement).",
    check: oneOf(["", "iptables", "nftables", "ipvs", "ebpf"], "want iptables, nftables, ipvs or ebpf"),
    toConfig: (c, mode) => {
      c.mode = mode as ProxyConfig["mode"];
    },
  },
  {
    name: "hostname-override",
    kind: "string",
    field: "hostnameOverride",
    help: "The Node name to act for, instead of the hostname.",
    overridesConfig: true,
    // Upstream skips an empty value and refuses one of spaces only.
    check: (name) => (name !== "" && name.trim() === "" ? "empty hostname-override is invalid" : undefined),
    toConfig: (c, name) => {
      if (name !== "") c.hostnameOverride = name.trim().toLowerCase();
    },
  },
  {
    name: "cluster-cidr",
    kind: "string",
    field: "clusterCIDR",
    help: "Pod CIDR(s), comma-separated; traffic from outside is masqueraded.",
    toConfig: sameField("clusterCIDR"),
  },
  {
    name: "kubeconfig",
    kind: "string",
    field: "kubeconfig",
    help: "Path to a kubeconfig; in-cluster config when unset.",
    toConfig: sameField("kubeconfig"),
  },
  {
    name: "bind-address",
    kind: "string",
    field: "bindAddress",
    help: "Overrides the node's primary IP (nothing binds to it).",
    check: (ip) => (ip !== "" && isIP(ip) === 0 ? `"${ip}" is not a valid IP address` : undefined),
    toConfig: unlessEmpty("bindAddress"),
  },
  {
    name: "bind-address-hard-fail",
    kind: "bool",
    field: "bindAddressHardFail",
    help: "Exit when the metrics or healthz port cannot be bound (else it is retried every 5s).",
    toConfig: sameField("bindAddressHardFail"),
  },
  { name: "cleanup", kind: "bool", field: "cleanup", help: "Remove every rule any mode wrote, then exit." },
  {
    // Not a config field upstream (an Options field), so it applies with --config too.
    name: "init-only",
    kind: "bool",
    field: "initOnly",
    help: "Read the Node, apply the kernel settings that need root (conntrack, IPVS, route_localnet), then exit.",
  },
  {
    // As --init-only, an Options field upstream: a --config file does not replace it.
    name: "master",
    kind: "string",
    field: "master",
    help: "The API server's address (URL, or host:port for plain http), overriding the kubeconfig's server.",
    check: masterFlagError,
  },
  {
    name: "write-config-to",
    kind: "string",
    field: "writeConfigTo",
    help: "Write the configuration (defaults and flags, or the --config file) to this file and exit.",
  },
  VERSION_FLAG,
  {
    name: "metrics-bind-address",
    kind: "string",
    field: "metricsBindAddress",
    help: "host:port for /metrics (default 127.0.0.1:10249, loopback only, as upstream); empty disables.",
    check: hostPortCheck,
    toConfig: unlessEmpty("metricsBindAddress"),
  },
  {
    name: "healthz-bind-address",
    kind: "string",
    field: "healthzBindAddress",
    help: "host:port for /healthz and /livez (default 0.0.0.0:10256, as upstream); empty disables.",
    check: hostPortCheck,
    toConfig: unlessEmpty("healthzBindAddress"),
  },
  {
    name: "nodeport-addresses",
    kind: "list",
    field: "nodePortAddresses",
    help: "CIDRs or 'primary' whose node IPs accept NodePorts (default: all in iptables, primary in nftables).",
    toConfig: (c, addresses) => {
      c.nodePortAddresses = nonEmpty(addresses);
    },
  },
  {
    name: "masquerade-all",
    kind: "bool",
    field: "masqueradeAll",
    help: "SNAT all traffic to ClusterIPs.",
    toConfig: (c, all) => {
      c.iptables.masqueradeAll = c.nftables.masqueradeAll = all;
    },
  },
  {
    name: "iptables-masquerade-bit",
    kind: INT32,
    field: "masqueradeBit",
    help: "Packet-mark bit that requests SNAT (0..31, default 14).",
    // The iptables section's bit only (IPVS mode reads it too); nftables mode has its own, set only by a file.
    toConfig: (c, bit) => {
      c.iptables.masqueradeBit = bit;
    },
  },
  {
    name: "iptables-localhost-nodeports",
    kind: "bool",
    field: "localhostNodePorts",
    help: "Accept NodePorts on 127.0.0.1 in iptables mode (default true).",
    toConfig: (c, accept) => {
      c.iptables.localhostNodePorts = accept;
    },
  },
  {
    // Upstream's generic minSyncPeriod: iptables and nftables mode both (options.go processV1Alpha1Flags).
    name: "iptables-min-sync-period",
    kind: "duration",
    field: "iptablesMinSyncPeriodMs",
    help: "Minimum time between rule syncs in iptables and nftables mode (default 1s).",
    toConfig: (c, ms) => {
      c.iptables.minSyncPeriodMs = c.nftables.minSyncPeriodMs = ms;
    },
  },
  {
    name: "iptables-sync-period",
    kind: "duration",
    field: "iptablesSyncPeriodMs",
    help: "Full resync interval in iptables and nftables mode (default 30s).",
    toConfig: (c, ms) => {
      c.iptables.syncPeriodMs = c.nftables.syncPeriodMs = ms;
    },
  },
  {
    name: "nftables-min-sync-period",
    kind: "duration",
    field: "nftablesMinSyncPeriodMs",
    help: "Minimum time between nftables syncs (default 1s).",
    toConfig: (c, ms) => {
      c.nftables.minSyncPeriodMs = ms;
    },
  },
  {
    name: "nftables-sync-period",
    kind: "duration",
    field: "nftablesSyncPeriodMs",
    help: "Retry interval after a failed nftables sync (default 30s).",
    toConfig: (c, ms) => {
      c.nftables.syncPeriodMs = ms;
    },
  },
  {
    name: "ipvs-scheduler",
    kind: "string",
    field: "ipvsScheduler",
    help: "IPVS scheduler: rr (default), wrr, lc, wlc, lblc, lblcr, sh, dh, sed, nq or mh.",
    toConfig: (c, scheduler) => {
      c.ipvs.scheduler = scheduler;
    },
  },
  {
    name: "ipvs-min-sync-period",
    kind: "duration",
    field: "ipvsMinSyncPeriodMs",
    help: "Minimum time between IPVS syncs (default 0s).",
    toConfig: (c, ms) => {
      c.ipvs.minSyncPeriodMs = ms;
    },
  },
  {
    name: "ipvs-sync-period",
    kind: "duration",
    field: "ipvsSyncPeriodMs",
    help: "Retry interval after a failed IPVS sync (default 30s).",
    toConfig: (c, ms) => {
      c.ipvs.syncPeriodMs = ms;
    },
  },
  {
    name: "ipvs-exclude-cidrs",
    kind: "list",
    field: "ipvsExcludeCIDRs",
    help: "CIDRs whose IPVS virtual servers kube-proxy leaves alone, comma-separated.",
    toConfig: (c, cidrs) => {
      c.ipvs.excludeCIDRs = nonEmpty(cidrs);
    },
  },
  {
    name: "ipvs-strict-arp",
    kind: "bool",
    field: "ipvsStrictARP",
    help: "Set arp_ignore=1 and arp_announce=2, so the node does not answer ARP for Service VIPs.",
    toConfig: (c, strict) => {
      c.ipvs.strictARP = strict;
    },
  },
  {
    name: "ipvs-tcp-timeout",
    kind: "duration",
    field: "ipvsTcpTimeoutMs",
    help: "Timeout of idle IPVS TCP connections (0 leaves the kernel's).",
    toConfig: (c, ms) => {
      c.ipvs.tcpTimeoutMs = ms;
    },
  },
  {
    name: "ipvs-tcpfin-timeout",
    kind: "duration",
    field: "ipvsTcpFinTimeoutMs",
    help: "Timeout of IPVS TCP connections after FIN (0 leaves the kernel's).",
    toConfig: (c, ms) => {
      c.ipvs.tcpFinTimeoutMs = ms;
    },
  },
  {
    name: "ipvs-udp-timeout",
    kind: "duration",
    field: "ipvsUdpTimeoutMs",
    help: "Timeout of IPVS UDP flows (0 leaves the kernel's).",
    toConfig: (c, ms) => {
      c.ipvs.udpTimeoutMs = ms;
    },
  },
  {
    name: "conntrack-max-per-core",
    kind: INT32,
    field: "conntrackMaxPerCore",
    help: "nf_conntrack_max per CPU (default 32768; 0 leaves the kernel's limit).",
    toConfig: (c, max) => {
      c.conntrack.maxPerCore = max;
    },
  },
  {
    name: "conntrack-min",
    kind: INT32,
    field: "conntrackMin",
    help: "Lower bound of nf_conntrack_max (default 131072).",
    toConfig: (c, min) => {
      c.conntrack.min = min;
    },
  },
  {
    name: "conntrack-tcp-timeout-established",
    kind: "duration",
    field: "conntrackTcpEstablishedTimeoutMs",
    help: "nf_conntrack_tcp_timeout_established (default 24h; 0 leaves the kernel's).",
    toConfig: (c, ms) => {
      c.conntrack.tcpEstablishedTimeoutMs = ms;
    },
  },
  {
    name: "conntrack-tcp-timeout-close-wait",
    kind: "duration",
    field: "conntrackTcpCloseWaitTimeoutMs",
    help: "nf_conntrack_tcp_timeout_close_wait (default 1h; 0 leaves the kernel's).",
    toConfig: (c, ms) => {
      c.conntrack.tcpCloseWaitTimeoutMs = ms;
    },
  },
  {
    name: "conntrack-tcp-be-liberal",
    kind: "bool",
    field: "conntrackTcpBeLiberal",
    help: "Set nf_conntrack_tcp_be_liberal=1 (and then drop no INVALID packets in iptables mode).",
    toConfig: (c, liberal) => {
      c.conntrack.tcpBeLiberal = liberal;
    },
  },
  {
    name: "conntrack-udp-timeout",
    kind: "duration",
    field: "conntrackUdpTimeoutMs",
    help: "nf_conntrack_udp_timeout (0, the default, leaves the kernel's).",
    toConfig: (c, ms) => {
      c.conntrack.udpTimeoutMs = ms;
    },
  },
  {
    name: "conntrack-udp-timeout-stream",
    kind: "duration",
    field: "conntrackUdpStreamTimeoutMs",
    help: "nf_conntrack_udp_timeout_stream (0, the default, leaves the kernel's).",
    toConfig: (c, ms) => {
      c.conntrack.udpStreamTimeoutMs = ms;
    },
  },
  {
    name: "v",
    // component-base's -v: strconv.ParseUint(v, 10, 31).
    kind: { min: 0, max: 2 ** 31 - 1, decimal: true },
    field: "verbosity",
    help: "Log verbosity; 0 is quiet.",
    overridesConfig: true,
    toConfig: (c, level) => {
      c.verbosity = level;
    },
  },
  // Not upstream's: ebpf mode's two places, named as Cilium's agent names them. No config file field holds them.
  {
    name: "cgroup-root",
    kind: "string",
    field: "cgroupRoot",
    help: "ebpf mode: the cgroup2 directory whose processes' sockets are balanced (default: the cgroup2 mount).",
    overridesConfig: true,
    toConfig: (c, path) => {
      c.ebpf.cgroupRoot = path;
    },
  },
  {
    name: "bpf-root",
    kind: "string",
    field: "bpfRoot",
    help: "ebpf mode: where programs' links and maps are pinned (default /sys/fs/bpf/switchyard).",
    overridesConfig: true,
    toConfig: (c, path) => {
      c.ebpf.bpfRoot = path;
    },
  },
  {
    name: "bpf-lb-map-max",
    kind: { min: 1, max: 2 ** 24 },
    field: "bpfLbMapMax",
    help: "ebpf mode: entries of each load-balancing map: services, backends, reverse NAT, session affinity and source ranges (default 65536; a Service port takes 1 + endpoints per frontend and scope).",
    overridesConfig: true,
    toConfig: (c, max) => {
      c.ebpf.lbMapMax = max;
    },
  },
  {
    name: "bpf-lb-acceleration",
    kind: "string",
    field: "bpfLbAcceleration",
    help: "ebpf mode: the XDP program ahead of tc on --devices: disabled (default), native, or best-effort (native where the driver has it).",
    check: oneOf(XDP_ACCELERATIONS, "want disabled, native or best-effort"),
    overridesConfig: true,
    toConfig: (c, acceleration) => {
      c.ebpf.lbAcceleration = acceleration as XdpAcceleration;
    },
  },
  {
    name: "devices",
    kind: "list",
    field: "devices",
    help: "ebpf mode: the devices traffic from outside the node arrives through (default: those holding the node's IPs).",
    overridesConfig: true,
    toConfig: (c, devices) => {
      c.ebpf.devices = nonEmpty(devices);
    },
  },
  ...UPSTREAM_EXTRA_FLAGS,
  { name: "help", kind: "bool", shorthand: "h", field: "help", help: "Print this help." },
];
