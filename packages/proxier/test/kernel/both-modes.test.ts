// What the kernel does while both modes' rules are installed, the moment a mode switch passes through now that
// the new mode syncs before the old mode's rules go (apps/kube-proxy/src/app.ts): the iptables rules send the
// Service to pod-0 only, the nftables table to pod-1 only, so the answer says which one NATed. Both nat chains sit
// at the same priority (dstnat); measured on Linux 6.18 (2026-12-02), a new connection takes the rules of the table
// whose nat chain was registered last. In a switch to nftables that is the new table, from its first sync on. In a
// rollback it is whichever is newer: iptables' nat table usually is older (kube-proxy's cleanup deletes only its own
// chains), and then the nftables rules keep taking new connections until the cleanup after the first iptables sync
// removes them. Either way a new connection meets one complete set of rules. A flow that started before the switch
// keeps its endpoint: its conntrack entry carries it. Each test starts from a node without either mode's tables.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Endpoint } from "kubernetes-types/discovery/v1.js";
import { cleanupIPTablesLeftovers, cleanupNFTablesLeftovers } from "../../src/apply/cleanup.js";
import { IptablesRestoreApplier } from "../../src/apply/iptables-restore.js";
import { NftApplier } from "../../src/apply/nft-applier.js";
import { renderIPTables } from "../../src/iptables/render.js";
import { renderNFTables } from "../../src/nftables/render.js";
import { ensureIPTablesSkeleton } from "../../src/proxier/iptables-backend.js";
import { buildMaps, iptOptions, makeService, makeSlice, nftOptions } from "../../src/testing/fixtures.js";
import { kernelTestsUnavailable, Topology } from "./topology.js";

const CLUSTER_IP = "172.30.0.42";
const POD_IPS = ["10.180.0.1", "10.180.0.2"];
const skip = await kernelTestsUnavailable(["nft", "iptables-nft-restore", "iptables-nft-save"]);

/** The Service on TCP and UDP port 80, its one endpoint `podIP`. */
function maps(podIP: string) {
  const svc = makeService("ns1", "svc1", {
    clusterIP: CLUSTER_IP,
    ports: [
      { name: "tcp", port: 80, protocol: "TCP" },
      { name: "udp", port: 80, protocol: "UDP" },
    ],
  });
  const eps: Endpoint[] = [{ addresses: [podIP], nodeName: "node1" }];
  const ports = [
    { name: "tcp", port: 80, protocol: "TCP" as const },
    { name: "udp", port: 80, protocol: "UDP" as const },
  ];
  return buildMaps("IPv4", [svc], [makeSlice("ns1", "svc1", "a", eps, ports)]);
}

describe("both modes' rules in the kernel at once (iptables nft backend and nftables)", {
  skip: skip ?? false,
}, () => {
  let topo: Topology;
  let ipt: IptablesRestoreApplier;
  let nft: NftApplier;

  const installIPTables = async () => {
    await ensureIPTablesSkeleton(ipt);
    const r = renderIPTables(iptOptions(), { ...maps(POD_IPS[0] ?? ""), now: 0 }, undefined);
    await ipt.restore(r.restore, { noflush: true, counters: true });
  };
  const installNFTables = async () => {
    const r = renderNFTables(nftOptions(), { ...maps(POD_IPS[1] ?? ""), now: 0 }, undefined);
    if (r.cleanup) await nft.run(r.cleanup);
    await nft.run(r.transaction);
  };
  /** A node with neither: iptables-nft's own tables go too, so the next install registers its hooks anew. */
  const removeBoth = async () => {
    await cleanupIPTablesLeftovers(ipt);
    await cleanupNFTablesLeftovers(nft, ["IPv4"]);
    for (const table of ["nat", "filter", "mangle"])
      await topo.nodeExec("nft", ["delete", "table", "ip", table]);
    await topo.nodeExec("conntrack", ["-F"]);
  };

  before(async () => {
    topo = await Topology.create(`sy-kb${process.pid}`, POD_IPS);
    ipt = new IptablesRestoreApplier({ family: "IPv4", backend: "nft", exec: topo.nodeExec });
    nft = new NftApplier({ exec: topo.nodeExec });
  });
  after(async () => {
    await topo?.destroy();
  });

  test("iptables installed first (a switch to nftables): new connections take the nftables table", async (t) => {
    await removeBoth();
    await installIPTables();
    await installNFTables();
    const answers = await topo.probe(CLUSTER_IP, 80, 20);
    t.diagnostic(`iptables first, then nftables: ${[...new Set(answers)].join(",")}`);
    assert.deepEqual(new Set(answers), new Set(["pod-1"]), answers.join(","));
  });

  test("nftables installed first, iptables' nat table made after it: new connections take the iptables rules", async (t) => {
    await removeBoth();
    await installNFTables();
    await installIPTables();
    const answers = await topo.probe(CLUSTER_IP, 80, 20);
    t.diagnostic(`nftables first, then iptables: ${[...new Set(answers)].join(",")}`);
    assert.deepEqual(new Set(answers), new Set(["pod-0"]), answers.join(","));
  });

  test("a flow from before the switch keeps its endpoint; a new one takes the new mode's", async () => {
    await removeBoth();
    await installIPTables();
    // One UDP flow (a fixed source port) through the iptables rules: pod-0.
    const flow = { udp: true, sourcePort: 40_123 };
    assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 3, flow), ["pod-0", "pod-0", "pod-0"]);
    // The switch as the proxy makes it: the new mode's rules, then the old mode's go.
    await installNFTables();
    await cleanupIPTablesLeftovers(ipt);
    assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 3, flow), ["pod-0", "pod-0", "pod-0"], "the old flow");
    const fresh = await topo.probe(CLUSTER_IP, 80, 3, { udp: true, sourcePort: 40_124 });
    assert.deepEqual(fresh, ["pod-1", "pod-1", "pod-1"], "a new flow");
    assert.deepEqual(
      new Set(await topo.probe(CLUSTER_IP, 80, 10)),
      new Set(["pod-1"]),
      "new TCP connections",
    );
  });
});
