// kube-proxy v1.37.2's validation of the whole configuration (pkg/proxy/apis/config/validation Validate, with
// component-base's logging and metrics checks), run on the defaulted configuration whether it came from flags or a
// file: the first error, in upstream's words ("KubeProxyConfiguration.<Field>: Invalid value: ...").
import { isIP } from "node:net";
import { parseHostPort } from "@switchyard/kube/flags";
import { type ProxyConfig, resolve } from "./config.js";
import { isZeroQuantity } from "./recorded.js";

/** Feature gates this proxy reads: their v1.37.2 defaults. */
const GATE_DEFAULTS: Readonly<Record<string, boolean>> = { KubeProxyIPVS: true, LoggingAlphaOptions: false };

export const gateEnabled = (c: ProxyConfig, gate: string): boolean =>
  c.recorded.featureGates[gate] ?? GATE_DEFAULTS[gate] ?? false;

const ROOT = "KubeProxyConfiguration";
const invalid = (field: string, value: unknown, why: string) =>
  `${ROOT}.${field}: Invalid value: ${JSON.stringify(value)}: ${why}`;

/** An IPv4 or IPv6 CIDR (netutils.ParseCIDRSloppy, which also takes leading zeros in IPv4). */
export function isCIDR(cidr: string): boolean {
  const m = /^(.+)\/(\d{1,3})$/.exec(cidr);
  if (!m?.[1] || !m[2]) return false;
  const ip = m[1].replace(/(^|\.)0+(\d)/g, "$1$2");
  const family = isIP(ip);
  return family !== 0 && Number(m[2]) <= (family === 4 ? 32 : 128);
}

const familyOf = (cidr: string) => (cidr.includes(":") ? 6 : 4);

function hostPortError(field: string, address: string): string | undefined {
  const hp = parseHostPort(address);
  if (hp === undefined) return invalid(field, address, "must be IP:port");
  if (isIP(hp.host) === 0) return invalid(field, hp.host, "must be a valid IP");
  if (!(hp.port >= 1 && hp.port <= 65535)) return invalid(field, String(hp.port), "must be a valid port");
  return undefined;
}

function nodePortAddressesError(addresses: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const [i, a] of addresses.entries()) {
    const field = `NodePortAddresses[${i}]`;
    if (a === "primary" || a === "localhost" || a === "all") {
      if (seen.has(a)) return `${ROOT}.${field}: Duplicate value: ${JSON.stringify(a)}`;
      seen.add(a);
    } else if (!isCIDR(a)) {
      return invalid(field, a, "must be a valid CIDR or one of the keywords 'primary', 'localhost', 'all'");
    }
  }
  return undefined;
}

const LOCAL_MODES = ["ClusterCIDR", "NodeCIDR", "BridgeInterface", "InterfaceNamePrefix", ""];

function detectLocalError(c: ProxyConfig): string | undefined {
  const mode = c.detectLocalMode;
  if (!LOCAL_MODES.includes(mode))
    return `${ROOT}.DetectLocalMode: Unsupported value: ${JSON.stringify(mode)}: supported values: ${LOCAL_MODES.map((m) => JSON.stringify(m)).join(", ")}`;
  const path = "DetectLocalConfiguration";
  if (mode === "BridgeInterface" && c.detectLocal.bridgeInterface === "")
    return invalid(`${path}.InterfaceName`, "", "must not be empty");
  if (mode === "InterfaceNamePrefix" && c.detectLocal.interfaceNamePrefix === "")
    return invalid(`${path}.InterfacePrefix`, "", "must not be empty");
  if (mode !== "ClusterCIDR" && mode !== "") return undefined;
  const cidrs = c.clusterCIDR === "" ? [] : c.clusterCIDR.split(",");
  const pair =
    "must be a either a single CIDR or dual-stack pair of CIDRs (e.g. [10.100.0.0/16, fde4:8dba:82e1::/48]";
  if (cidrs.length > 2) return invalid(`${path}.ClusterCIDRs`, cidrs, pair);
  const bad = cidrs.findIndex((cidr) => !isCIDR(cidr));
  if (bad >= 0)
    return invalid(
      `${path}.ClusterCIDRs[${bad}]`,
      cidrs[bad],
      "must be a valid CIDR block (e.g. 10.100.0.0/16 or fde4:8dba:82e1::/48)",
    );
  if (cidrs.length === 2 && familyOf(cidrs[0] ?? "") === familyOf(cidrs[1] ?? ""))
    return invalid(`${path}.ClusterCIDRs`, cidrs, pair);
  return undefined;
}

/** The mode's own section: iptables' bit always, nftables' and IPVS's only in their modes. */
function sectionErrors(c: ProxyConfig): (string | undefined)[] {
  const mode = resolve(c).mode;
  const bit = (field: string, v: number) =>
    v < 0 || v > 31 ? invalid(field, v, "must be within the range [0, 31]") : undefined;
  const nonNegative = (field: string, ms: number) =>
    ms < 0 ? invalid(field, ms, "must be greater than or equal to 0") : undefined;
  const ipvs = "KubeProxyIPVSConfiguration";
  return [
    bit("KubeProxyIPTablesConfiguration.MasqueradeBit", c.iptables.masqueradeBit),
    ...(mode === "nftables"
      ? [bit("KubeProxyNFTablesConfiguration.MasqueradeBit", c.nftables.masqueradeBit)]
      : []),
    ...(mode === "ipvs"
      ? [
          nonNegative(`${ipvs}.TCPTimeout`, c.ipvs.tcpTimeoutMs),
          nonNegative(`${ipvs}.TCPFinTimeout`, c.ipvs.tcpFinTimeoutMs),
          nonNegative(`${ipvs}.UDPTimeout`, c.ipvs.udpTimeoutMs),
          ...c.ipvs.excludeCIDRs.map((cidr, i) =>
            isCIDR(cidr) ? undefined : invalid(`${ipvs}.ExcludeCidrs[${i}]`, cidr, "must be a valid CIDR"),
          ),
        ]
      : []),
  ];
}

function linuxErrors(c: ProxyConfig): (string | undefined)[] {
  const ct = c.conntrack;
  const path = "KubeProxyLinuxConfiguration.KubeProxyConntrackConfiguration";
  const nonNegative = (field: string, v: number) =>
    v < 0 ? invalid(`${path}.${field}`, v, "must be greater than or equal to 0") : undefined;
  return [
    nonNegative("MaxPerCore", ct.maxPerCore),
    nonNegative("Min", ct.min),
    nonNegative("TCPEstablishedTimeout", ct.tcpEstablishedTimeoutMs),
    nonNegative("TCPCloseWaitTimeout", ct.tcpCloseWaitTimeoutMs),
    nonNegative("UDPTimeout", ct.udpTimeoutMs),
    nonNegative("UDPStreamTimeout", ct.udpStreamTimeoutMs),
    c.oomScoreAdj < -1000 || c.oomScoreAdj > 1000
      ? invalid(
          "KubeProxyLinuxConfiguration.OOMScoreAdj",
          c.oomScoreAdj,
          "must be within the range [-1000, 1000]",
        )
      : undefined,
  ];
}

function modeError(c: ProxyConfig): string | undefined {
  // ebpf is ours, not upstream's (socket-level balancing in BPF programs, as Cilium's kube-proxy replacement does).
  const valid = ["iptables", "nftables", "ebpf", ...(gateEnabled(c, "KubeProxyIPVS") ? ["ipvs"] : [])];
  if (c.mode === "" || valid.includes(c.mode)) return undefined;
  return invalid(
    "Mode.ProxyMode",
    c.mode,
    `must be ${valid.sort().join(", ")} or blank (blank means the best-available proxy [currently iptables])`,
  );
}

function periodErrors(c: ProxyConfig): (string | undefined)[] {
  const { minSyncPeriodMs: min, syncPeriodMs: sync } = resolve(c);
  return [
    c.recorded.configSyncPeriodMs <= 0
      ? invalid("ConfigSyncPeriod", c.recorded.configSyncPeriodMs, "must be greater than 0")
      : undefined,
    sync <= 0 ? invalid("SyncPeriod", sync, "must be greater than 0") : undefined,
    min < 0 ? invalid("MinSyncPeriod", min, "must be greater than or equal to 0") : undefined,
    min > sync
      ? invalid("SyncPeriod", min, `must be greater than or equal to ${ROOT}.MinSyncPeriod`)
      : undefined,
  ];
}

function loggingErrors(c: ProxyConfig): (string | undefined)[] {
  const l = c.recorded.logging;
  const alpha = gateEnabled(c, "LoggingAlphaOptions");
  const gated = (stream: "text" | "json") => [
    l[stream].splitStream && !alpha
      ? `logging.options.${stream}.splitStream: Forbidden: Feature LoggingAlphaOptions is disabled`
      : undefined,
    !isZeroQuantity(l[stream].infoBufferSize) && !alpha
      ? `logging.options.${stream}.infoBufferSize: Forbidden: Feature LoggingAlphaOptions is disabled`
      : undefined,
  ];
  return [
    l.flushFrequencyMs <= 0
      ? `logging.flushFrequency: Invalid value: ${l.flushFrequencyMs}: Must be greater than zero`
      : undefined,
    l.format !== "text" && l.format !== "json"
      ? `logging.format: Invalid value: ${JSON.stringify(l.format)}: Unsupported log format`
      : undefined,
    l.vmodule.length > 0 && l.format !== "text"
      ? "logging.vmodule: Forbidden: Only supported for text log format"
      : undefined,
    ...gated("text"),
    ...gated("json"),
  ];
}

/**
 * Upstream's Validate: the first error, or undefined. Gate names are not checked (this proxy does not carry
 * upstream's list of gates), only the two gates it reads take effect.
 */
export function validateConfig(c: ProxyConfig): string | undefined {
  const r = c.recorded;
  const errors: (string | undefined)[] = [
    ...sectionErrors(c),
    ...linuxErrors(c),
    modeError(c),
    r.clientConnection.burst < 0
      ? invalid("ClientConnection.Burst", r.clientConnection.burst, "must be greater than or equal to 0")
      : undefined,
    ...periodErrors(c),
    isIP(c.bindAddress) === 0
      ? invalid("BindAddress", c.bindAddress, "not a valid textual representation of an IP address")
      : undefined,
    c.healthzBindAddress === "" ? undefined : hostPortError("HealthzBindAddress", c.healthzBindAddress),
    hostPortError("MetricsBindAddress", c.metricsBindAddress),
    nodePortAddressesError(c.nodePortAddresses),
    r.showHiddenMetricsForVersion !== "" && r.showHiddenMetricsForVersion !== "1.36"
      ? invalid(
          "ShowHiddenMetricsForVersion",
          r.showHiddenMetricsForVersion,
          `--show-hidden-metrics-for-version must be omitted or have the value '1.36'. Only the previous minor version is allowed.`,
        )
      : undefined,
    detectLocalError(c),
    ...loggingErrors(c),
  ];
  return errors.find((e) => e !== undefined);
}
