// The configuration written back as a v1alpha1 KubeProxyConfiguration, as upstream writes it for
// --write-config-to and /configz: every field (the ones this proxy does not act on as recorded.ts keeps them),
// and the mode's sync periods in the mode's section only (v1alpha1 conversion.go).
import { formatGoDuration } from "@switchyard/basics";
import yaml from "js-yaml";
import { type ProxyConfig, resolve } from "./config.js";
import { CONFIG_API_VERSION, CONFIG_KIND } from "./config-file.js";
import { recordedV1alpha1 } from "./recorded.js";

const d = formatGoDuration;

export function toV1alpha1(c: ProxyConfig): Record<string, unknown> {
  const r = resolve(c);
  const recorded = recordedV1alpha1(c.recorded);
  // ebpf mode reads nftables' section (config.ts resolve), so its periods are written back there.
  const sectionMode = r.mode === "ebpf" ? "nftables" : r.mode;
  const inMode = (mode: string, ms: number) => (sectionMode === mode ? d(ms) : "0s");
  return {
    apiVersion: CONFIG_API_VERSION,
    kind: CONFIG_KIND,
    bindAddress: c.bindAddress,
    bindAddressHardFail: c.bindAddressHardFail,
    ...recorded,
    clientConnection: { ...recorded.clientConnection, kubeconfig: c.kubeconfig },
    clusterCIDR: c.clusterCIDR,
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
    healthzBindAddress: c.healthzBindAddress,
    hostnameOverride: c.hostnameOverride,
    iptables: {
      localhostNodePorts: c.iptables.localhostNodePorts,
      masqueradeAll: sectionMode !== "nftables" && r.masqueradeAll,
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
    logging: { ...recorded.logging, verbosity: c.verbosity },
    metricsBindAddress: c.metricsBindAddress,
    mode: r.mode,
    nftables: {
      masqueradeAll: sectionMode === "nftables" && r.masqueradeAll,
      masqueradeBit: c.nftables.masqueradeBit,
      minSyncPeriod: inMode("nftables", r.minSyncPeriodMs),
      syncPeriod: inMode("nftables", r.syncPeriodMs),
    },
    // platformApplyDefaults (server_linux.go): nftables mode defaults to the primary node IP only.
    nodePortAddresses:
      c.nodePortAddresses.length > 0 ? c.nodePortAddresses : sectionMode === "nftables" ? ["primary"] : null,
    oomScoreAdj: c.oomScoreAdj,
  };
}

/** The file `--write-config-to` writes: keys sorted and strings double-quoted where YAML needs quotes, as Go's. */
export const renderV1alpha1 = (c: ProxyConfig): string =>
  yaml.dump(toV1alpha1(c), { sortKeys: true, lineWidth: -1, quotingType: '"', noArrayIndent: true });
