// Shared setup for the IPVS tests; the address plan is src/testing/fixtures.ts's.

import type { IPFamily } from "@switchyard/basics";
import { FakeIPTables } from "../../src/iptables/fake.js";
import { FakeIPVS } from "../../src/ipvs/fake.js";
import { FakeIPSet } from "../../src/ipvs/fake-ipset.js";
import type { IPVSOptions } from "../../src/ipvs/options.js";
import type { IPVSState, IPVSSyncResult } from "../../src/ipvs/render.js";
import { ensureIPVSJumpChains } from "../../src/ipvs/skeleton.js";
import { NODE_IP, NODE_IPV6, NODE_NAME } from "../../src/testing/fixtures.js";

export function ipvsOptions(family: IPFamily = "IPv4", extra: Partial<IPVSOptions> = {}): IPVSOptions {
  const v4 = family === "IPv4";
  return {
    family,
    nodeName: NODE_NAME,
    nodeLabels: { "topology.kubernetes.io/zone": "zone-a" },
    nodeIP: v4 ? NODE_IP : NODE_IPV6,
    nodeAddresses: v4 ? [NODE_IP, "127.0.0.1"] : [NODE_IPV6, "::1", "fe80::1"],
    nodePortAddresses: "all",
    masqueradeBit: 14,
    localDetector: { mode: "ClusterCIDR", cidr: v4 ? "10.0.0.0/8" : "fd00:10::/32" },
    randomFully: true,
    ...extra,
  };
}

/** The three fakes a sync is applied to, in kube-proxy's order. */
export class FakeKernel {
  readonly iptables = new FakeIPTables();
  readonly ipset = new FakeIPSet();
  readonly ipvs = new FakeIPVS();
  readonly bound = new Set<string>();

  constructor(readonly nodeAddresses: readonly string[]) {
    ensureIPVSJumpChains(this.iptables);
  }

  /** Applies the diffs; returns the state to keep. */
  apply(result: IPVSSyncResult): IPVSState {
    this.ipset.restore(result.ipsetDiff);
    this.iptables.restore(result.iptablesRestore, { noflush: true });
    for (const ip of result.bind.add) this.bound.add(ip);
    for (const ip of result.bind.remove) this.bound.delete(ip);
    this.ipvs.restore(result.ipvsadmDiff);
    return result.state;
  }

  get localIPs(): string[] {
    return [...this.nodeAddresses, ...this.bound];
  }
}
