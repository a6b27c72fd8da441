// Reads a KubeProxyConfiguration (kubeproxy.config.k8s.io/v1alpha1) as kubeadm writes it.
// Decoding is upstream's (cmd/kube-proxy/app/options.go loadConfig, v1.37.2): strict first, and
// when only strictness fails (an unknown or a duplicate field) the file is decoded leniently and
// the strict error is reported for a log line, not as a failure, so a typo or a field copied from
// an older guide does not crash-loop a DaemonSet. A value of the wrong type is an error naming the
// field. Zero values (null, "", 0s) mean "default", as upstream's defaulting treats them, so a
// kubeadm file full of empty fields yields the defaults.

import { isIPv4 } from "node:net";
import { parseGoDuration } from "@switchyard/basics";
import yaml from "js-yaml";
import { appendPortIfNeeded, DEFAULT_PORTS, defaultConfig, type ProxyConfig } from "./config.js";
import {
  flushFrequencyMs,
  isQuantity,
  type RecordedConfig,
  type StreamOptions,
  type VModuleItem,
} from "./recorded.js";

export const CONFIG_API_VERSION = "kubeproxy.config.k8s.io/v1alpha1";
export const CONFIG_KIND = "KubeProxyConfiguration";

/** A bad config file; main prints the message on one line and exits 2. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

type Kind =
  | "string"
  | "bool"
  | "int"
  | "uint"
  | "number"
  | "duration"
  | "nanosOrDuration"
  | "quantity"
  | "vmodule"
  | "strings"
  | "boolMap"
  | Schema;
interface Schema {
  readonly [field: string]: Kind;
}

// Every v1alpha1 field, so a file kubeadm wrote always decodes; most are accepted and ignored.
const SCHEMA: Schema = {
  apiVersion: "string",
  kind: "string",
  featureGates: "boolMap",
  clientConnection: {
    kubeconfig: "string",
    acceptContentTypes: "string",
    contentType: "string",
    qps: "number",
    burst: "int",
  },
  logging: {
    format: "string",
    flushFrequency: "nanosOrDuration",
    verbosity: "uint",
    vmodule: "vmodule",
    options: {
      text: { splitStream: "bool", infoBufferSize: "quantity" },
      json: { splitStream: "bool", infoBufferSize: "quantity" },
    },
  },
  hostnameOverride: "string",
  bindAddress: "string",
  healthzBindAddress: "string",
  metricsBindAddress: "string",
  bindAddressHardFail: "bool",
  enableProfiling: "bool",
  showHiddenMetricsForVersion: "string",
  mode: "string",
  iptables: {
    masqueradeBit: "int",
    masqueradeAll: "bool",
    localhostNodePorts: "bool",
    syncPeriod: "duration",
    minSyncPeriod: "duration",
  },
  ipvs: {
    syncPeriod: "duration",
    minSyncPeriod: "duration",
    scheduler: "string",
    excludeCIDRs: "strings",
    strictARP: "bool",
    tcpTimeout: "duration",
    tcpFinTimeout: "duration",
    udpTimeout: "duration",
  },
  nftables: {
    masqueradeBit: "int",
    masqueradeAll: "bool",
    syncPeriod: "duration",
    minSyncPeriod: "duration",
  },
  winkernel: {
    networkName: "string",
    sourceVip: "string",
    enableDSR: "bool",
    rootHnsEndpointName: "string",
    forwardHealthCheckVip: "bool",
  },
  detectLocalMode: "string",
  detectLocal: { bridgeInterface: "string", interfaceNamePrefix: "string" },
  clusterCIDR: "string",
  nodePortAddresses: "strings",
  oomScoreAdj: "int",
  conntrack: {
    maxPerCore: "int",
    min: "int",
    tcpEstablishedTimeout: "duration",
    tcpCloseWaitTimeout: "duration",
    tcpBeLiberal: "bool",
    udpTimeout: "duration",
    udpStreamTimeout: "duration",
  },
  configSyncPeriod: "duration",
  portRange: "string",
  windowsRunAsService: "bool",
};

type Decoded = { [field: string]: unknown };

/**
 * Checks `value` against the schema; returns it with durations as ms and nulls dropped. Unknown fields are
 * left out and named in `strict` (sigs.k8s.io/json's wording), as the lenient decoder drops them.
 */
function decode(value: unknown, kind: Kind, path: string, strict: string[]): unknown {
  const bad = (want: string) =>
    new ConfigError(`invalid value ${JSON.stringify(value)} for field "${path}": want ${want}`);
  if (value === null || value === undefined) return undefined;
  if (typeof kind === "object") {
    if (typeof value !== "object" || Array.isArray(value)) throw bad("an object");
    const out: Decoded = {};
    for (const [field, v] of Object.entries(value)) {
      const sub = kind[field];
      const where = path === "" ? field : `${path}.${field}`;
      if (sub === undefined) {
        strict.push(`unknown field "${where}"`);
        continue;
      }
      const d = decode(v, sub, where, strict);
      if (d !== undefined) out[field] = d;
    }
    return out;
  }
  switch (kind) {
    case "string":
      if (typeof value !== "string") throw bad("a string");
      return value;
    case "bool":
      if (typeof value !== "boolean") throw bad("true or false");
      return value;
    case "int":
      if (!Number.isInteger(value)) throw bad("an integer");
      return value;
    case "uint":
      if (!Number.isInteger(value) || (value as number) < 0) throw bad("a non-negative integer");
      return value;
    case "number":
      if (typeof value !== "number") throw bad("a number");
      return value;
    case "duration": {
      const ms = typeof value === "string" ? parseGoDuration(value) : undefined;
      if (ms === undefined) throw bad('a duration such as "1s" or "30s"');
      return ms;
    }
    case "nanosOrDuration":
      // Kept as written: upstream writes it back in the form it was read in (recordedSection).
      if (flushFrequencyMs(value) === undefined) throw bad('a duration such as "5s", or nanoseconds');
      return value;
    case "quantity":
      if (typeof value !== "string" && typeof value !== "number") throw bad("a quantity such as 1Ki");
      if (!isQuantity(String(value))) throw bad("a quantity such as 1Ki");
      return String(value);
    case "vmodule":
      if (
        !Array.isArray(value) ||
        !value.every(
          (v) => typeof v?.filePattern === "string" && Number.isInteger(v?.verbosity) && v.verbosity >= 0,
        )
      )
        throw bad("a list of {filePattern, verbosity}");
      return value.map((v) => ({ filePattern: v.filePattern as string, verbosity: v.verbosity as number }));
    case "strings":
      if (!Array.isArray(value) || !value.every((s) => typeof s === "string")) throw bad("a list of strings");
      return value;
    case "boolMap":
      if (typeof value !== "object" || Object.values(value).some((b) => typeof b !== "boolean")) {
        throw bad("a map of feature names to true/false");
      }
      return value;
  }
}

const pick = <T>(v: unknown, fallback: T): T =>
  v === undefined || v === "" || v === 0 ? fallback : (v as T);

/**
 * Upstream's conntrack fields maxPerCore, min and the two TCP timeouts are pointers: only
 * null/absent takes the default, and an explicit 0 (kind writes maxPerCore: 0) means "leave the
 * kernel's value". The UDP timeouts have no default.
 */
function conntrackSection(ct: Decoded, d: ProxyConfig["conntrack"]): ProxyConfig["conntrack"] {
  const num = (v: unknown, fallback: number) => (v as number | undefined) ?? fallback;
  return {
    maxPerCore: num(ct.maxPerCore, d.maxPerCore),
    min: num(ct.min, d.min),
    tcpEstablishedTimeoutMs: num(ct.tcpEstablishedTimeout, d.tcpEstablishedTimeoutMs),
    tcpCloseWaitTimeoutMs: num(ct.tcpCloseWaitTimeout, d.tcpCloseWaitTimeoutMs),
    tcpBeLiberal: pick(ct.tcpBeLiberal, false),
    udpTimeoutMs: num(ct.udpTimeout, 0),
    udpStreamTimeoutMs: num(ct.udpStreamTimeout, 0),
  };
}

/**
 * bindAddress and the two server addresses as upstream defaults them (v1alpha1 defaults.go): unset addresses
 * take the bind address's family (0.0.0.0:10256 and 127.0.0.1:10249, or [::]:10256 and [::1]:10249 when
 * bindAddress is IPv6), and an address without a port gets the default one.
 */
function bindAddresses(bindAddress: string, d: Decoded) {
  const [healthzHost, metricsHost] = isIPv4(bindAddress) ? ["0.0.0.0", "127.0.0.1"] : ["[::]", "[::1]"];
  const address = (v: unknown, host: string, port: number) =>
    typeof v === "string" && v !== "" ? appendPortIfNeeded(v, port) : `${host}:${port}`;
  return {
    bindAddress,
    healthzBindAddress: address(d.healthzBindAddress, healthzHost, DEFAULT_PORTS.healthzBindAddress),
    metricsBindAddress: address(d.metricsBindAddress, metricsHost, DEFAULT_PORTS.metricsBindAddress),
  };
}

/**
 * YAML into a value. A key given twice fails strict decoding; the lenient decoder keeps the last value, as
 * encoding/json does, and the duplicate is named in `strict`.
 */
function loadYaml(text: string, strict: string[]): unknown {
  try {
    return yaml.load(text);
  } catch (err) {
    const e = err as yaml.YAMLException;
    if (!/duplicated mapping key/.test(e.reason ?? "")) {
      throw new ConfigError(`cannot parse config file: ${e.message.split("\n")[0]}`);
    }
    const key = /^\s*([^:#]+?)\s*:/.exec(text.split("\n")[e.mark?.line ?? -1] ?? "")?.[1] ?? "?";
    strict.push(`duplicate field "${key}"`);
    try {
      return yaml.load(text, { json: true });
    } catch (again) {
      throw new ConfigError(`cannot parse config file: ${(again as Error).message.split("\n")[0]}`);
    }
  }
}

/**
 * The message upstream logs ("Using lenient decoding as strict decoding failed", err=...) when a file decoded
 * only leniently; undefined when strict decoding succeeded.
 */
export const strictDecodingError = (strict: readonly string[]): string | undefined =>
  strict.length > 0 ? `strict decoding error: ${strict.join(", ")}` : undefined;

/**
 * Parses the file's text into a defaulted ProxyConfig. What made strict decoding fail (unknown and duplicate
 * fields) is pushed onto `strict` for the caller to log; everything else that is wrong throws ConfigError.
 */
export function parseConfigFile(text: string, strict: string[] = []): ProxyConfig {
  const raw = loadYaml(text, strict);
  const d = (decode(raw ?? {}, SCHEMA, "", strict) ?? {}) as Decoded;
  if (d.apiVersion !== CONFIG_API_VERSION) {
    throw new ConfigError(
      `field "apiVersion" must be ${CONFIG_API_VERSION}, got ${JSON.stringify(d.apiVersion ?? "")}`,
    );
  }
  if (d.kind !== CONFIG_KIND) {
    throw new ConfigError(`field "kind" must be ${CONFIG_KIND}, got ${JSON.stringify(d.kind ?? "")}`);
  }
  const c = defaultConfig();
  const sub = (name: string) => (d[name] ?? {}) as Decoded;
  const ipt = sub("iptables");
  const nft = sub("nftables");
  const ipvs = sub("ipvs");
  return {
    mode: pick(d.mode, "") as ProxyConfig["mode"],
    hostnameOverride: pick(d.hostnameOverride, c.hostnameOverride),
    ...bindAddresses(pick(d.bindAddress, c.bindAddress), d),
    bindAddressHardFail: pick(d.bindAddressHardFail, c.bindAddressHardFail),
    clusterCIDR: pick(d.clusterCIDR, c.clusterCIDR),
    kubeconfig: pick(sub("clientConnection").kubeconfig, c.kubeconfig),
    nodePortAddresses: pick(d.nodePortAddresses, c.nodePortAddresses),
    detectLocalMode: pick(d.detectLocalMode, "ClusterCIDR") as ProxyConfig["detectLocalMode"],
    detectLocal: { ...c.detectLocal, ...sub("detectLocal") },
    iptables: {
      masqueradeAll: pick(ipt.masqueradeAll, c.iptables.masqueradeAll),
      // 0 is a valid bit, so only null/absent means default here.
      masqueradeBit: (ipt.masqueradeBit as number | undefined) ?? c.iptables.masqueradeBit,
      localhostNodePorts: (ipt.localhostNodePorts as boolean | undefined) ?? c.iptables.localhostNodePorts,
      minSyncPeriodMs: pick(ipt.minSyncPeriod, c.iptables.minSyncPeriodMs),
      syncPeriodMs: pick(ipt.syncPeriod, c.iptables.syncPeriodMs),
    },
    nftables: {
      masqueradeAll: pick(nft.masqueradeAll, c.nftables.masqueradeAll),
      masqueradeBit: (nft.masqueradeBit as number | undefined) ?? c.nftables.masqueradeBit,
      minSyncPeriodMs: pick(nft.minSyncPeriod, c.nftables.minSyncPeriodMs),
      syncPeriodMs: pick(nft.syncPeriod, c.nftables.syncPeriodMs),
    },
    ipvs: {
      minSyncPeriodMs: pick(ipvs.minSyncPeriod, c.ipvs.minSyncPeriodMs),
      syncPeriodMs: pick(ipvs.syncPeriod, c.ipvs.syncPeriodMs),
      scheduler: pick(ipvs.scheduler, c.ipvs.scheduler),
      excludeCIDRs: pick(ipvs.excludeCIDRs, c.ipvs.excludeCIDRs),
      strictARP: pick(ipvs.strictARP, c.ipvs.strictARP),
      tcpTimeoutMs: pick(ipvs.tcpTimeout, c.ipvs.tcpTimeoutMs),
      tcpFinTimeoutMs: pick(ipvs.tcpFinTimeout, c.ipvs.tcpFinTimeoutMs),
      udpTimeoutMs: pick(ipvs.udpTimeout, c.ipvs.udpTimeoutMs),
    },
    // Not a field of the file (upstream has no ebpf mode): --cgroup-root and --bpf-root set it.
    ebpf: c.ebpf,
    conntrack: conntrackSection(sub("conntrack"), c.conntrack),
    // A pointer upstream: only null/absent takes the default, an explicit 0 is 0.
    oomScoreAdj: (d.oomScoreAdj as number | undefined) ?? c.oomScoreAdj,
    verbosity: pick(sub("logging").verbosity, 0),
    recorded: recordedSection(d, c.recorded),
  };
}

/**
 * logging.flushFrequency as component-base's TimeOrMetaDuration reads it: a string or nanoseconds, written back in
 * the same form; zero takes the default, written as a string.
 */
function flushFrequency(raw: unknown, d: RecordedConfig["logging"]) {
  const ms = flushFrequencyMs(raw) ?? 0;
  if (ms === 0) return { flushFrequencyMs: d.flushFrequencyMs, flushFrequencyAsNanos: false };
  return { flushFrequencyMs: ms, flushFrequencyAsNanos: typeof raw === "number" };
}

/** The fields kept only to be validated and written back, with v1alpha1's defaults for zero values. */
function recordedSection(d: Decoded, r: RecordedConfig): RecordedConfig {
  const cc = (d.clientConnection ?? {}) as Decoded;
  const log = (d.logging ?? {}) as Decoded;
  const options = (log.options ?? {}) as Decoded;
  const stream = (name: "text" | "json"): StreamOptions => {
    const o = (options[name] ?? {}) as Decoded;
    return {
      splitStream: pick(o.splitStream, false),
      infoBufferSize: (o.infoBufferSize as string | undefined) ?? r.logging[name].infoBufferSize,
    };
  };
  return {
    featureGates: (d.featureGates as Record<string, boolean> | undefined) ?? {},
    clientConnection: {
      acceptContentTypes: pick(cc.acceptContentTypes, ""),
      contentType: pick(cc.contentType, r.clientConnection.contentType),
      qps: pick(cc.qps, r.clientConnection.qps),
      burst: pick(cc.burst, r.clientConnection.burst),
    },
    enableProfiling: pick(d.enableProfiling, false),
    showHiddenMetricsForVersion: pick(d.showHiddenMetricsForVersion, ""),
    configSyncPeriodMs: pick(d.configSyncPeriod, r.configSyncPeriodMs),
    logging: {
      format: pick(log.format, r.logging.format),
      ...flushFrequency(log.flushFrequency, r.logging),
      vmodule: (log.vmodule as VModuleItem[] | undefined) ?? [],
      text: stream("text"),
      json: stream("json"),
    },
    winkernel: { ...r.winkernel, ...((d.winkernel ?? {}) as Partial<RecordedConfig["winkernel"]>) },
  };
}
