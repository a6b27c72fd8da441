// Test doubles for code built on @switchyard/proxier; import from "@switchyard/proxier/testing".
// Each fake implements the interface of the real thing it stands in for (NFTRunner,
// IPTablesRestorer, IPVSRestorer, IPSetRestorer), and each tracer walks a packet through fakes.
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
