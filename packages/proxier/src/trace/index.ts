// Each backend's model of the kernel it programs and the tracer that walks a packet through it; import from
// "@switchyard/proxier/trace". The in-memory kernels (FakeNFTables, FakeIPTables, FakeIPVS, FakeIPSet,
// FakeBPFMaps) take what the real ones do (scripts; the eBPF mode's map writes) and implement the interface of
// what they stand in for (NFTRunner, IPTablesRestorer, IPVSRestorer, IPSetRestorer, BPFMapStore), so they
// serve tests as fakes and `switchyard-lab explain` as the kernel it loads a node's saved rules into; the
// tracers say where a packet goes through them.
export { BPFMapError, type BPFMapErrorCode, FakeBPFMaps } from "../ebpf/fake.js";
export { type EBPFTracePacket, traceEBPF } from "../ebpf/tracer.js";
export {
  BUILTIN_TARGETS,
  type FakeChain as FakeIPTablesChain,
  FakeIPTables,
  type FakeTable as FakeIPTablesTable,
  IPTablesError,
} from "../iptables/fake.js";
export {
  type TracePacket as IPTablesTracePacket,
  type TraceResult as IPTablesTraceResult,
  tracePacket as traceIPTablesPacket,
} from "../iptables/tracer.js";
export { FakeIPVS, findVirtualServer, IPVSError } from "../ipvs/fake.js";
export { canonicalIPSetList, FakeIPSet, IPSetError } from "../ipvs/fake-ipset.js";
export {
  type IPVSKernel,
  type IPVSTracePacket,
  type IPVSTraceResult,
  traceIPVSPacket,
} from "../ipvs/tracer.js";
export {
  type FakeChain,
  type FakeContainer,
  type FakeElement,
  FakeNFTables,
  type FakeRule,
  type FakeTable,
  referencesOf,
} from "../nftables/fake.js";
export {
  type TracePacket,
  type TracePath,
  type TraceResult,
  type TraceStep,
  tracePacket,
} from "../nftables/tracer.js";
