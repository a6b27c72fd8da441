// What the eBPF tests share: the renderer's options for this node (address plan: src/testing/fixtures.ts) and
// a sync written into a FakeBPFMaps.
import type { IPFamily } from "@switchyard/basics";
import type { FakeBPFMaps } from "../../src/ebpf/fake.js";
import type { EBPFOptions } from "../../src/ebpf/options.js";
import {
  type EBPFState,
  type EBPFSyncInput,
  type EBPFSyncResult,
  renderEBPF,
} from "../../src/ebpf/render.js";
import { NODE_IP, NODE_IPV6, NODE_NAME } from "../../src/testing/fixtures.js";

export function ebpfOptions(family: IPFamily = "IPv4", extra: Partial<EBPFOptions> = {}): EBPFOptions {
  return {
    family,
    nodeName: NODE_NAME,
    nodeLabels: { "topology.kubernetes.io/zone": "zone-a" },
    nodePortIPs: [family === "IPv4" ? NODE_IP : NODE_IPV6],
    nodeIP: family === "IPv4" ? NODE_IP : NODE_IPV6,
    ...extra,
  };
}

/** Renders and writes the steps into `fake` (which throws if it refuses one). */
export function syncInto(
  fake: FakeBPFMaps,
  options: EBPFOptions,
  input: EBPFSyncInput,
  previous?: EBPFState,
): EBPFSyncResult {
  const result = renderEBPF(options, input, previous);
  fake.writeSync(options.family, result.steps);
  return result;
}
