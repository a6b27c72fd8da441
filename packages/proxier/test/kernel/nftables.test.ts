// The nftables renderer's output, applied by the real nft in a network namespace, steers
// real connections: both endpoints answer (through the numgen DNAT map), a pod reaches itself
// (the hairpin set), a partial sync takes one endpoint away, no endpoints means a REJECT
// (connection refused, not a timeout), and NodePorts work the same way. Once per family: the `ip` table over
// IPv4 and the `ip6` table over the topology's IPv6 twins; and once per writer: `nft -f` and netlink.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Endpoint } from "kubernetes-types/discovery/v1.js";
import { NetlinkNftApplier } from "../../src/apply/netlink-applier.js";
import { NftApplier } from "../../src/apply/nft-applier.js";
import { type NFTablesState, renderNFTables } from "../../src/nftables/render.js";
import { buildMaps, makeService, makeSlice, nftOptions } from "../../src/testing/fixtures.js";
import { inFamily, kernelTestsUnavailable, Topology } from "./topology.js";

const NODE_PORT = 30080;
const POD_IPS_V4 = ["10.180.0.1", "10.180.0.2"];

const skip = await kernelTestsUnavailable(["nft"]);
if (skip) console.log(`# skipping nftables kernel tests: ${skip}`);

for (const [family, writer] of [
  ["IPv4", "nft"],
  ["IPv6", "nft"],
  ["IPv4", "netlink"],
  ["IPv6", "netlink"],
] as const) {
  const CLUSTER_IP = inFamily(family, "172.30.0.41");
  const NODE_ADDRESS = inFamily(family, "192.168.0.2");
  const POD_IPS = POD_IPS_V4.map((ip) => inFamily(family, ip));
  const table = family === "IPv6" ? "ip6" : "ip";

  function maps(podIPs: readonly string[]) {
    const svc = makeService("ns1", "svc1", {
      type: "NodePort",
      clusterIP: CLUSTER_IP,
      clusterIPs: [CLUSTER_IP],
      ipFamilies: [family],
      ports: [{ name: "p80", port: 80, protocol: "TCP", nodePort: NODE_PORT }],
    });
    const eps: Endpoint[] = podIPs.map((ip) => ({ addresses: [ip], nodeName: "node1" }));
    return buildMaps(
      family,
      [svc],
      [makeSlice("ns1", "svc1", "a", eps, [{ name: "p80", port: 80 }], family)],
    );
  }

  describe(`nftables rules in the kernel (${table} table, written by ${writer})`, {
    skip: skip ?? false,
  }, () => {
    let topo: Topology;
    let nft: NftApplier | NetlinkNftApplier;
    let state: NFTablesState | undefined;
    let now = 0;

    /** One sync as a proxier would do it: cleanup transaction first, then the main one. */
    async function sync(podIPs: readonly string[], changed?: ReadonlySet<string>): Promise<void> {
      now += 2000;
      const r = renderNFTables(nftOptions(family), { ...maps(podIPs), changedServices: changed, now }, state);
      if (r.cleanup) await nft.run(r.cleanup);
      await nft.run(r.transaction);
      state = r.state;
    }

    before(async () => {
      topo = await Topology.create(`sy-kt${family === "IPv6" ? 6 : 4}${writer[1]}${process.pid}`, POD_IPS_V4);
      nft =
        writer === "nft"
          ? new NftApplier({ exec: topo.nodeExec })
          : new NetlinkNftApplier({ netns: topo.node, exec: topo.nodeExec, writer: "netlink" });
    });
    after(async () => {
      if (nft instanceof NetlinkNftApplier) {
        // every transaction went over netlink: none needed nft
        assert.equal(nft.stats.fallback, 0);
        nft.close();
      }
      await topo?.destroy();
    });

    test("full sync: a ClusterIP reaches both endpoints", async () => {
      await sync(POD_IPS);
      const answers = await topo.probe(CLUSTER_IP, 80, 30);
      assert.deepEqual(new Set(answers), new Set(["pod-0", "pod-1"]), `answers: ${answers.join(",")}`);
    });

    test("traffic from the node itself goes through the output hook", async () => {
      const answers = await topo.probe(CLUSTER_IP, 80, 20, { netns: topo.node });
      assert.deepEqual(new Set(answers), new Set(["pod-0", "pod-1"]), `answers: ${answers.join(",")}`);
    });

    test("a pod reaches itself through the ClusterIP: the hairpin connection is masqueraded", async () => {
      const pod0 = topo.pods[0];
      assert.ok(pod0);
      // Without SNAT the pod would answer itself directly and its own connection would hang.
      const answers = await topo.probe(CLUSTER_IP, 80, 20, { netns: pod0.netns });
      assert.deepEqual(new Set(answers), new Set(["pod-0", "pod-1"]), `answers: ${answers.join(",")}`);
    });

    test("the NodePort on the node IP reaches both endpoints", async () => {
      const answers = await topo.probe(NODE_ADDRESS, NODE_PORT, 30);
      assert.deepEqual(new Set(answers), new Set(["pod-0", "pod-1"]), `answers: ${answers.join(",")}`);
    });

    test("partial sync without one endpoint: only the other answers", async () => {
      await sync([POD_IPS[0] ?? ""], new Set(["ns1/svc1"]));
      assert.deepEqual(new Set(await topo.probe(CLUSTER_IP, 80, 15)), new Set(["pod-0"]));
      assert.deepEqual(new Set(await topo.probe(NODE_ADDRESS, NODE_PORT, 10)), new Set(["pod-0"]));
      // The single endpoint is DNATed inline; there are no per-endpoint chains to leave behind.
      const listed = await nft.listObjects(table, "kube-proxy");
      assert.ok(!listed.chains.some((c) => c.startsWith("endpoint-")), listed.chains.join("\n"));
    });

    test("no endpoints: connections are refused, not left to time out", async () => {
      await sync([], new Set(["ns1/svc1"]));
      assert.deepEqual(new Set(await topo.probe(CLUSTER_IP, 80, 3)), new Set(["ECONNREFUSED"]));
      assert.deepEqual(new Set(await topo.probe(NODE_ADDRESS, NODE_PORT, 3)), new Set(["ECONNREFUSED"]));
      // The next sync deletes the service's stale chains for real; the kernel must accept that.
      await sync([], new Set());
      const listed = await nft.listObjects(table, "kube-proxy");
      assert.ok(!listed.chains.some((c) => c.includes("ns1/svc1")), listed.chains.join("\n"));
    });

    test("endpoints come back after a full resync from scratch state", async () => {
      state = undefined;
      await sync(POD_IPS);
      const answers = await topo.probe(CLUSTER_IP, 80, 30);
      assert.deepEqual(new Set(answers), new Set(["pod-0", "pod-1"]));
    });

    test("deleting the table removes every rule; a second delete is harmless", async () => {
      await nft.deleteTable(table, "kube-proxy");
      await nft.deleteTable(table, "kube-proxy");
      assert.deepEqual(await nft.listObjects(table, "kube-proxy"), { chains: [], sets: [] });
      // With no DNAT the ClusterIP is just an unrouted address on the node.
      const answers = await topo.probe(CLUSTER_IP, 80, 1);
      assert.ok(!answers.includes("pod-0") && !answers.includes("pod-1"), answers.join(","));
    });
  });
}
