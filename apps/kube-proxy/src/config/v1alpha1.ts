// The configuration written back as a v1alpha1 KubeProxyConfiguration, as upstream writes it for
// --write-config-to and /configz: every field, upstream's defaults for the ones this proxy does not model,
// and the mode's sync periods in the mode's section only (v1alpha1 conversion.go).
import { formatGoDuration } from "@switchyard/kube";
import yaml from "js-yaml";
import { type ProxyConfig, resolve } from "./config.js";
import { CONFIG_API_VERSION, CONFIG_KIND } from "./config-file.js";

const d = formatGoDuration;

export function toV1alpha1(c: ProxyConfig): Record<string, unknown> {
  const r = resolve(c);
  const inMode = (mode: string, ms: number) => (r.mode === mode ? d(ms) : "0s");
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: CONFIG_KIND,
    bindAddress: c.bindAddress,
    bindAddressHardFail: c.bindAddressHardFail,
    clientConnection: {
      acceptContentTypes: "",
      burst: 10,
      contentType: "application/vnd.kubernetes.protobuf",
      kubeconfig: c.kubeconfig,
      qps: 5,
    },
    clusterCIDR: c.clusterCIDR,
    configSyncPeriod: "15m0s",
    conntrack: {
      maxPerCore: c.conntrack.maxPerCore,
      min: c.conntrack.min,
      tcpBeLiberal: c.conntrack.tcpBeLiberal,
      tcpCloseWaitTimeout: d(c.conntrack.tcpCloseWaitTimeoutMs),
      tcpEstablishedTimeout: d(c.conntrack.tcpEstablishedTimeoutMs),
      udpStreamTimeout: d(c.conntrack.udpStreamTimeoutMs),
      udpTimeout: d(c.conntrack.udpTimeoutMs),
    },
    detectLocal: { ...c.detectLocal },
    detectLocalMode: c.detectLocalMode || "ClusterCIDR",
    enableProfiling: false,
    healthzBindAddress: c.healthzBindAddress,
    hostnameOverride: c.hostnameOverride,
    iptables: {
      localhostNodePorts: c.iptables.localhostNodePorts,
      masqueradeAll: r.mode !== "nftables" && r.masqueradeAll,
      masqueradeBit: c.iptables.masqueradeBit,
      minSyncPeriod: inMode("iptables", r.minSyncPeriodMs),
      syncPeriod: inMode("iptables", r.syncPeriodMs),
    },
    ipvs: {
      excludeCIDRs: c.ipvs.excludeCIDRs.length > 0 ? c.ipvs.excludeCIDRs : null,
      minSyncPeriod: inMode("ipvs", r.minSyncPeriodMs),
      scheduler: c.ipvs.scheduler,
      strictARP: c.ipvs.strictARP,
      syncPeriod: inMode("ipvs", r.syncPeriodMs),
      tcpFinTimeout: d(c.ipvs.tcpFinTimeoutMs),
      tcpTimeout: d(c.ipvs.tcpTimeoutMs),
      udpTimeout: d(c.ipvs.udpTimeoutMs),
    },
    logging: {
      flushFrequency: "5s",
      format: "text",
      options: { json: { infoBufferSize: "0" }, text: { infoBufferSize: "0" } },
      verbosity: c.verbosity,
    },
    metricsBindAddress: c.metricsBindAddress,
    mode: r.mode,
    nftables: {
      masqueradeAll: r.mode === "nftables" && r.masqueradeAll,
      masqueradeBit: c.nftables.masqueradeBit,
      minSyncPeriod: inMode("nftables", r.minSyncPeriodMs),
      syncPeriod: inMode("nftables", r.syncPeriodMs),
    },
    // platformApplyDefaults (server_linux.go): nftables mode defaults to the primary node IP only.
    nodePortAddresses:
      c.nodePortAddresses.length > 0 ? c.nodePortAddresses : r.mode === "nftables" ? ["primary"] : null,
    oomScoreAdj: c.oomScoreAdj,
    portRange: "",
    showHiddenMetricsForVersion: "",
    winkernel: {
      enableDSR: false,
      forwardHealthCheckVip: false,
      networkName: "",
      rootHnsEndpointName: "",
      sourceVip: "",
    },
  };
}

/** The file `--write-config-to` writes: keys sorted and strings double-quoted where YAML needs quotes, as Go's. */
export const renderV1alpha1 = (c: ProxyConfig): string =>
  yaml.dump(toV1alpha1(c), { sortKeys: true, lineWidth: -1, quotingType: '"', noArrayIndent: true });
