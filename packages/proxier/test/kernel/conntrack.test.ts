// A stale UDP flow for real: with nftables rules in a namespace, a client keeps one UDP
// flow (fixed source port) to a ClusterIP. When its endpoint goes away the flow keeps
// going to the old pod until the stale conntrack entries are deleted.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Endpoint } from "kubernetes-types/discovery/v1.js";
import { inNetns, realExec } from "../../src/apply/exec.js";
import { NftApplier } from "../../src/apply/nft-applier.js";
import { ConntrackCleaner } from "../../src/conntrack/conntrack.js";
import { staleConntrackFilters } from "../../src/conntrack/stale.js";
import { type NFTablesState, renderNFTables } from "../../src/nftables/render.js";
import { buildMaps, makeService, makeSlice, nftOptions } from "../fixtures.js";
import { kernelTestsUnavailable, Topology } from "./topology.js";

const CLUSTER_IP = "172.30.0.53";
const skip = await kernelTestsUnavailable(["nft", "conntrack"]);
if (skip) console.log(`# skipping conntrack kernel tests: ${skip}`);

function maps(podIPs: readonly string[]) {
  const svc = makeService("ns1", "dns", {
    clusterIP: CLUSTER_IP,
    ports: [{ name: "dns", port: 80, protocol: "UDP" }],
  });
  const eps: Endpoint[] = podIPs.map((ip) => ({ addresses: [ip], nodeName: "node1" }));
  return buildMaps(
    "IPv4",
    [svc],
    [makeSlice("ns1", "dns", "a", eps, [{ name: "dns", port: 80, protocol: "UDP" }])],
  );
}

describe("stale UDP conntrack entries in the kernel", { skip: skip ?? false }, () => {
  let topo: Topology;
  before(async () => {
    topo = await Topology.create(`sy-kc${process.pid}`, ["10.180.0.1", "10.180.0.2"]);
  });
  after(async () => {
    await topo?.destroy();
  });

  test("a flow sticks to a removed endpoint until its entries are deleted", async () => {
    const nft = new NftApplier({ exec: topo.nodeExec });
    const first = maps(["10.180.0.1"]);
    const r1 = renderNFTables(nftOptions(), { ...first, now: 0 });
    await nft.run(r1.transaction);
    const state: NFTablesState = r1.state;
    const flow = { udp: true, sourcePort: 40053 };
    assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 3, flow), ["pod-0", "pod-0", "pod-0"]);

    const second = maps(["10.180.0.2"]);
    const r2 = renderNFTables(
      nftOptions(),
      { ...second, changedServices: new Set(["ns1/dns"]), now: 10 },
      state,
    );
    await nft.run(r2.transaction);
    // The rules now say pod-1, but the existing flow still goes to pod-0.
    assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 2, flow), ["pod-0", "pod-0"]);
    // A new flow follows the rules.
    assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 1, { udp: true }), ["pod-1"]);

    const filters = staleConntrackFilters(first, second);
    assert.deepEqual(filters, [{ protocol: "udp", origDst: CLUSTER_IP, dstNat: "10.180.0.1" }]);
    const result = await new ConntrackCleaner(inNetns(topo.node, realExec)).delete(filters);
    assert.deepEqual(result.errors, []);
    assert.equal(result.deleted, 1);
    assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 2, flow), ["pod-1", "pod-1"]);
  });
});
