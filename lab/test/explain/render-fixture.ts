// The fixture cluster rendered for node-1 by the proxier's own renderers, into its fakes: what the kernel
// listings in fixtures/ were loaded from, and what a parsed listing must load back to; for ebpf mode, the maps'
// writes and the fake maps holding them.
import {
  type EBPFState,
  type EBPFSyncResult,
  EndpointsChangeTracker,
  ensureJumpChains,
  type MapWriteStep,
  renderEBPF,
  renderIPTables,
  renderNFTables,
  ServiceChangeTracker,
} from "@switchyard/proxier";
import { FakeBPFMaps, FakeIPTables, FakeNFTables } from "@switchyard/proxier/trace";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { FamilyMaps } from "../../src/explain/bpf-maps.js";
import { CLUSTER_CIDR, NODE, NODE_LABELS, SERVICE_CIDR, services, slices } from "./fixture-cluster.js";

const common = {
  family: "IPv4" as const,
  nodeName: NODE.name,
  nodeLabels: NODE_LABELS,
  nodeIP: NODE.ip,
  masqueradeBit: 14,
  localDetector: { mode: "ClusterCIDR" as const, cidr: CLUSTER_CIDR },
};

function maps(sliceList: readonly EndpointSlice[] = slices) {
  const sct = new ServiceChangeTracker("IPv4");
  for (const s of services) sct.update(undefined, s);
  const ect = new EndpointsChangeTracker({ family: "IPv4", nodeName: NODE.name });
  for (const s of sliceList) ect.endpointSliceUpdate(s, false);
  return { services: sct.apply().services, endpoints: ect.apply().endpoints, now: 0 };
}

/** nftables mode: the fake holding the rendered table. */
export function renderedNFTables(): FakeNFTables {
  const nft = new FakeNFTables("ip", "kube-proxy");
  const options = { ...common, nodePortAddresses: [NODE.ip], serviceCIDRs: [SERVICE_CIDR] };
  nft.run(renderNFTables(options, maps()).transaction);
  return nft;
}

/** iptables mode: the fake holding the jump rules and the rendered chains. */
export function renderedIPTables(): FakeIPTables {
  const ipt = new FakeIPTables();
  ensureJumpChains(ipt);
  const options = {
    ...common,
    nodePortAddresses: "all" as const,
    localhostNodePorts: true,
    randomFully: true,
  };
  ipt.restore(renderIPTables(options, maps()).restore);
  return ipt;
}

const ebpfOptions = {
  family: "IPv4" as const,
  nodeName: NODE.name,
  nodeLabels: NODE_LABELS,
  nodePortIPs: [NODE.ip],
};

/** ebpf mode: node-1's sync of the cluster with `sliceList`, after `previous` (none: a first, full sync). */
export function ebpfSync(sliceList: readonly EndpointSlice[] = slices, previous?: EBPFState): EBPFSyncResult {
  return renderEBPF(ebpfOptions, maps(sliceList), previous);
}

/** ebpf mode: the writes of node-1's first sync (the order a store must run them in). */
export function ebpfSteps(): MapWriteStep[] {
  return ebpfSync().steps;
}

/** ebpf mode: the fake maps after node-1's first sync. */
export function renderedEBPF(): FakeBPFMaps {
  const fake = new FakeBPFMaps();
  fake.writeSync("IPv4", ebpfSteps());
  return fake;
}

/** What node-1's pins would give explain: the fake's IPv4 maps, dumped. */
export function dumpsOf(fake: FakeBPFMaps): FamilyMaps {
  const dump = (m: "services" | "backends" | "revNat") => fake.dumpSync("IPv4", m);
  return {
    family: "IPv4",
    dumps: { services: dump("services"), backends: dump("backends"), revNat: dump("revNat") },
  };
}
