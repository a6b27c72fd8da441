// @switchyard/proxier: the pure core of a kube-proxy-compatible service proxy. The in-memory kernels and
// packet tracers are in "@switchyard/proxier/trace" (src/trace/), the test fixtures in
// "@switchyard/proxier/testing" (src/testing/).

export type { IPFamily } from "@switchyard/basics";
export {
  DEFAULT_DESTROY_OBJECT_PATH,
  KernelSocketEnder,
  type SocketEnderOptions,
} from "./apply/bpf-destroy.js";
export {
  BPFLoadError,
  DEFAULT_PIN_ROOT,
  loadSockPrograms,
  removeSockPrograms,
  type SockLoadOptions,
  type SockLoadResult,
} from "./apply/bpf-loader.js";
export { BPFMapError as KernelBPFMapError, KernelBPFMapStore } from "./apply/bpf-map-store.js";
export {
  loadTcPrograms,
  removeTcPrograms,
  type TcLoadOptions,
  type TcLoadResult,
  type TcRemoval,
} from "./apply/bpf-tc.js";
export { XDP_ACCELERATIONS, type XdpAcceleration } from "./apply/bpf-xdp.js";
export * from "./apply/cleanup.js";
export * from "./apply/exec.js";
export * from "./apply/iptables-restore.js";
export * from "./apply/ipvs-applier.js";
export * from "./apply/netlink-applier.js";
export * from "./apply/nft-applier.js";
export * from "./apply/nft-runner.js";
export * from "./conntrack/clean-stale.js";
export * from "./conntrack/conntrack.js";
export * from "./conntrack/flow.js";
export * from "./conntrack/reconcile.js";
export * from "./conntrack/sysctls.js";
// The eBPF mode's pure core: the renderer, the map store it writes through, and the maps' decoded contents with
// their text forms (golden files, `cilium-dbg bpf lb list`'s table).
export {
  addressName,
  type BackendRecord,
  type ContentsMapName,
  decodeContents,
  type MapContents,
  type RevNatRecord,
  type ServiceEntry,
  serviceEntryName,
} from "./ebpf/contents.js";
export { contentsText, resolvedText } from "./ebpf/contents-text.js";
export type { MapName as BPFMapName } from "./ebpf/layout.js";
export { formatLBList, type LBListView } from "./ebpf/lb-list.js";
export { type BPFMapStore, type MapWriteStep, stepSize } from "./ebpf/map-store.js";
export {
  type EBPFOptions,
  type EBPFState,
  type EBPFSyncInput,
  type EBPFSyncResult,
  renderEBPF,
} from "./ebpf/render.js";
export type { SocketEnder, SocketEndResult } from "./ebpf/socket-ender.js";
export { flowName as staleFlowName, type StaleFlow, staleFlows } from "./ebpf/stale-flows.js";
export * from "./healthcheck/http.js";
export * from "./healthcheck/proxy-health.js";
export * from "./healthcheck/response.js";
export * from "./healthcheck/service-health.js";
export {
  endpointChain,
  type IPTablesTable,
  isServiceChainName as isIPTablesServiceChainName,
  portProtoHash,
  type ServicePortChains,
  servicePortChains,
} from "./iptables/names.js";
export {
  DEFAULT_SYNC_PERIOD_MS,
  type IPTablesOptions,
  type LocalDetector,
  localhostNodePortsEnabled,
  masqueradeMark as iptablesMasqueradeMark,
} from "./iptables/options.js";
export * from "./iptables/render.js";
export * from "./iptables/skeleton.js";
export { type IPSetMembers, ipsetDiff, ipsetFull } from "./ipvs/ipset.js";
export { ipvsIPTablesRestore, type NoNodeAccess } from "./ipvs/iptables-rules.js";
export { type IPVSTable, ipvsadmDiff, ipvsadmFull, realServerName } from "./ipvs/ipvsadm.js";
export {
  DEFAULT_SCHEDULER as IPVS_DEFAULT_SCHEDULER,
  DUMMY_DEVICE as IPVS_DUMMY_DEVICE,
  IPSETS as IPVS_IPSETS,
  ipsetName,
} from "./ipvs/names.js";
export type { IPVSOptions } from "./ipvs/options.js";
export { parseIPVSList } from "./ipvs/parse-list.js";
export * from "./ipvs/render.js";
export { ensureIPVSJumpChains, IPVS_JUMP_CHAINS } from "./ipvs/skeleton.js";
export * from "./ipvs/sysctls.js";
export type { RealServer, VirtualServer, VirtualServerEntry } from "./ipvs/virtual-server.js";
export * from "./metrics/metrics.js";
export * from "./metrics/nfacct-metrics.js";
export * from "./metrics/record.js";
export * from "./model/endpoint.js";
export * from "./model/endpoints-change-tracker.js";
export * from "./model/service-change-tracker.js";
export * from "./model/service-port.js";
export * from "./model/service-port-name.js";
export * from "./model/topology.js";
export * from "./model/traffic-policy.js";
export * from "./nfacct/nfacct.js";
export * from "./nftables/errors.js";
export * from "./nftables/names.js";
// The netlink encoder alone (pure): what the netlink writer sends for a transaction, for benchmarks and tools.
export { type AnonymousSetNamer, type EncodedBatch, encodeTransaction } from "./nftables/netlink/batch.js";
export * from "./nftables/objects.js";
export { masqueradeMark, type NFTablesOptions } from "./nftables/options.js";
export * from "./nftables/render.js";
export { BASE_CHAINS, JUMP_CHAINS } from "./nftables/skeleton.js";
export { Transaction } from "./nftables/transaction.js";
export * from "./proxier/backend.js";
export * from "./proxier/ebpf-backend.js";
export * from "./proxier/iptables-backend.js";
export * from "./proxier/ipvs-backend.js";
export * from "./proxier/meta-proxier.js";
export * from "./proxier/nftables-backend.js";
export * from "./proxier/proxier.js";
export * from "./proxier/service-cidrs.js";
export {
  BoundedFrequencyRunner,
  type BoundedFrequencyRunnerOptions,
  kubeProxyRunnerIntervals,
} from "./sync/bounded-frequency-runner.js";
export * from "./sync/full-sync-policy.js";
export { DEFAULT_MIN_SYNC_PERIOD_MS, FULL_SYNC_PERIOD_MS } from "./sync/sync-periods.js";
export * from "./sysctl/kernel-version.js";
export * from "./sysctl/node-setting.js";
export * from "./sysctl/proc-files.js";
export * from "./sysctl/route-localnet.js";
