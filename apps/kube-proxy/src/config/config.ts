// kube-proxy's configuration after defaulting: the v1alpha1 KubeProxyConfiguration fields
// this proxy uses, durations in ms. Both the config file and the flags write into it, and
// `resolve` turns it into what the app runs with.
import {
  type ConntrackConfig,
  DEFAULT_CONNTRACK,
  type ProxyMode,
  type XdpAcceleration,
} from "@switchyard/proxier";
import { defaultRecorded, type RecordedConfig } from "./recorded.js";

export interface ProxyConfig {
  /** "" means the platform default, iptables, as upstream. */
  mode: "" | ProxyMode;
  hostnameOverride: string;
  /** The node's primary IP if set (the name is historical; nothing binds to it). */
  bindAddress: string;
  /** host:port; "" disables. Upstream default 0.0.0.0:10256 (kube-proxy's own default, kept). */
  healthzBindAddress: string;
  /** host:port; "" disables. Upstream default 127.0.0.1:10249: loopback only. */
  metricsBindAddress: string;
  /** A port that cannot be bound is fatal instead of retried every 5 s. */
  bindAddressHardFail: boolean;
  /** Pod CIDR(s), comma-separated for dual-stack. */
  clusterCIDR: string;
  kubeconfig: string;
  nodePortAddresses: string[];
  detectLocalMode: "" | "ClusterCIDR" | "NodeCIDR" | "BridgeInterface" | "InterfaceNamePrefix";
  detectLocal: { bridgeInterface: string; interfaceNamePrefix: string };
  iptables: {
    masqueradeAll: boolean;
    masqueradeBit: number;
    localhostNodePorts: boolean;
    minSyncPeriodMs: number;
    syncPeriodMs: number;
  };
  nftables: { masqueradeAll: boolean; masqueradeBit: number; minSyncPeriodMs: number; syncPeriodMs: number };
  ipvs: IPVSConfig;
  /**
   * ebpf mode (not upstream's; flags only): "" picks the default (the cgroup2 mount; /sys/fs/bpf/switchyard), no
   * devices the ones holding the node's IPs; lbAcceleration is --bpf-lb-acceleration (the XDP program).
   */
  ebpf: {
    cgroupRoot: string;
    bpfRoot: string;
    devices: string[];
    lbMapMax: number;
    lbAcceleration: XdpAcceleration;
  };
  /** The conntrack sysctls set at start-up (durations in ms; 0 leaves the kernel's value). */
  conntrack: { -readonly [K in keyof ConntrackConfig]: ConntrackConfig[K] };
  /** The process's /proc/self/oom_score_adj (upstream: -999, qos.KubeProxyOOMScoreAdj). */
  oomScoreAdj: number;
  verbosity: number;
  /** The fields upstream validates and writes back but this proxy does not act on (recorded.ts). */
  recorded: RecordedConfig;
}

export interface IPVSConfig {
  minSyncPeriodMs: number;
  syncPeriodMs: number;
  /** "" means rr. */
  scheduler: string;
  /** Virtual servers there are someone else's: never deleted. */
  excludeCIDRs: string[];
  /** Sets arp_ignore=1 and arp_announce=2, so the node does not answer ARP for its VIPs. */
  strictARP: boolean;
  /** IPVS connection timeouts (ipvsadm --set); 0 leaves the kernel's value. */
  tcpTimeoutMs: number;
  tcpFinTimeoutMs: number;
  udpTimeoutMs: number;
}

/** v1alpha1's defaults (SetDefaults_KubeProxyConfiguration), for Linux. */
export function defaultConfig(): ProxyConfig {
  return {
    mode: "",
    hostnameOverride: "",
    bindAddress: "0.0.0.0",
    healthzBindAddress: "0.0.0.0:10256",
    metricsBindAddress: "127.0.0.1:10249",
    bindAddressHardFail: false,
    clusterCIDR: "",
    kubeconfig: "",
    nodePortAddresses: [],
    detectLocalMode: "ClusterCIDR",
    detectLocal: { bridgeInterface: "", interfaceNamePrefix: "" },
    iptables: {
      masqueradeAll: false,
      masqueradeBit: 14,
      localhostNodePorts: true,
      minSyncPeriodMs: 1000,
      syncPeriodMs: 30_000,
    },
    nftables: { masqueradeAll: false, masqueradeBit: 14, minSyncPeriodMs: 1000, syncPeriodMs: 30_000 },
    // Cilium's defaults for --bpf-lb-map-max and --bpf-lb-acceleration.
    ebpf: { cgroupRoot: "", bpfRoot: "", devices: [], lbMapMax: 65_536, lbAcceleration: "disabled" },
    ipvs: {
      minSyncPeriodMs: 0,
      syncPeriodMs: 30_000,
      scheduler: "",
      excludeCIDRs: [],
      strictARP: false,
      tcpTimeoutMs: 0,
      tcpFinTimeoutMs: 0,
      udpTimeoutMs: 0,
    },
    conntrack: { ...DEFAULT_CONNTRACK },
    oomScoreAdj: -999,
    verbosity: 0,
    recorded: defaultRecorded(),
  };
}

/** What one run of the proxy needs, with the mode's own section picked. */
export interface ResolvedOptions {
  readonly mode: ProxyMode;
  readonly hostnameOverride: string;
  readonly bindAddress: string;
  readonly healthzBindAddress: string;
  readonly metricsBindAddress: string;
  readonly bindAddressHardFail: boolean;
  readonly clusterCIDRs: readonly string[];
  readonly kubeconfig: string;
  readonly nodePortAddresses: readonly string[];
  readonly detectLocalMode: ProxyConfig["detectLocalMode"];
  readonly detectLocal: ProxyConfig["detectLocal"];
  readonly masqueradeAll: boolean;
  readonly masqueradeBit: number;
  readonly localhostNodePorts: boolean;
  readonly minSyncPeriodMs: number;
  readonly syncPeriodMs: number;
  readonly conntrack: Readonly<ConntrackConfig>;
  /** The ipvs section; read only in ipvs mode. */
  readonly ipvs: Readonly<IPVSConfig>;
  readonly ebpf: Readonly<ProxyConfig["ebpf"]>;
  readonly oomScoreAdj: number;
  readonly verbosity: number;
}

export function resolve(c: ProxyConfig): ResolvedOptions {
  const mode = c.mode === "" ? "iptables" : c.mode;
  // ebpf mode has no section upstream; it syncs on nftables' periods (the same defaults, 1 s and 30 s).
  const section =
    mode === "nftables" || mode === "ebpf"
      ? c.nftables
      : mode === "ipvs"
        ? { ...c.iptables, ...c.ipvs }
        : c.iptables;
  return {
    mode,
    hostnameOverride: c.hostnameOverride,
    bindAddress: c.bindAddress,
    healthzBindAddress: c.healthzBindAddress,
    metricsBindAddress: c.metricsBindAddress,
    bindAddressHardFail: c.bindAddressHardFail,
    clusterCIDRs: c.clusterCIDR
      .split(",")
      .map((s) => s.trim())
      .filter((s) => s !== ""),
    kubeconfig: c.kubeconfig,
    nodePortAddresses: c.nodePortAddresses,
    detectLocalMode: c.detectLocalMode,
    detectLocal: c.detectLocal,
    masqueradeAll: section.masqueradeAll,
    masqueradeBit: section.masqueradeBit,
    localhostNodePorts: c.iptables.localhostNodePorts,
    minSyncPeriodMs: section.minSyncPeriodMs,
    syncPeriodMs: section.syncPeriodMs,
    conntrack: c.conntrack,
    ipvs: c.ipvs,
    ebpf: c.ebpf,
    oomScoreAdj: c.oomScoreAdj,
    verbosity: c.verbosity,
  };
}

/** The ports upstream appends to a bind address given without one (v1alpha1 defaults: AppendPortIfNeeded). */
export const DEFAULT_PORTS = { healthzBindAddress: 10256, metricsBindAddress: 10249 } as const;

/** "10.0.0.1" → "10.0.0.1:10249", "::1" → "[::1]:10249"; an address with a port (or "") unchanged. */
export function appendPortIfNeeded(address: string, port: number): string {
  if (address === "" || /^\[.*\]:\d+$/.test(address) || /^[^:]*:\d+$/.test(address)) return address;
  return address.includes(":") ? `[${address}]:${port}` : `${address}:${port}`;
}
