// Stale UDP flows for real: the Proxier programs nftables in a namespace and reconciles the
// node's conntrack table through the conntrack CLI after each sync that changed UDP
// endpoints. A client keeps UDP flows (fixed source ports) to a ClusterIP; every datagram
// is answered, so no step waits on a timeout.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { realClock } from "@switchyard/kube";
import type { Endpoint } from "kubernetes-types/discovery/v1.js";
import { NetlinkNftApplier } from "../../src/apply/netlink-applier.js";
import { ConntrackCLI } from "../../src/conntrack/conntrack.js";
import type { ConntrackFlow } from "../../src/conntrack/flow.js";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { NFTablesProxyBackend } from "../../src/proxier/nftables-backend.js";
import { Proxier } from "../../src/proxier/proxier.js";
import { makeService, makeSlice, NODE_NAME, nftOptions } from "../../src/testing/fixtures.js";
import { kernelTestsUnavailable, Topology } from "./topology.js";

const CLUSTER_IP = "172.30.0.53";
const POD_A = "10.180.0.1";
const POD_B = "10.180.0.2";
const skip = await kernelTestsUnavailable(["nft", "conntrack"]);
if (skip) console.log(`# skipping conntrack kernel tests: ${skip}`);

const dns = makeService("ns1", "dns", {
  clusterIP: CLUSTER_IP,
  ports: [{ name: "dns", port: 80, protocol: "UDP" }],
});
const ready = (ip: string): Endpoint => ({ addresses: [ip], nodeName: NODE_NAME });
/** Terminating but still serving: new flows avoid it while a ready endpoint exists. */
const terminating = (ip: string): Endpoint => ({
  addresses: [ip],
  nodeName: NODE_NAME,
  conditions: { ready: false, serving: true, terminating: true },
});
/** Terminating and no longer serving: never chosen, its flows go by upstream's rule. */
const gone = (ip: string): Endpoint => ({
  addresses: [ip],
  nodeName: NODE_NAME,
  conditions: { ready: false, serving: false, terminating: true },
});
const slice = (eps: Endpoint[]) =>
  makeSlice("ns1", "dns", "a", eps, [{ name: "dns", port: 80, protocol: "UDP" }]);

describe("the conntrack reconciler in the kernel", { skip: skip ?? false }, () => {
  let topo: Topology;
  before(async () => {
    topo = await Topology.create(`sy-kc${process.pid}`, [POD_A, POD_B]);
  });
  after(async () => {
    await topo?.destroy();
  });

  /** A Proxier on the topology's node, reconciling its conntrack table (emptied first); `keep` is upstream's rule. */
  async function start(keep: boolean) {
    await topo.nodeExec("conntrack", ["-F"]);
    const metrics = newProxyMetrics("nftables");
    const table = new ConntrackCLI(topo.nodeExec);
    const proxier = new Proxier({
      nodeName: NODE_NAME,
      backend: new NFTablesProxyBackend({
        options: nftOptions(),
        // the writer the proxy uses by default
        nft: new NetlinkNftApplier({ netns: topo.node, exec: topo.nodeExec, writer: "netlink" }),
        metrics,
      }),
      metrics,
      health: new ProxyHealth({ clock: realClock, healthTimeoutMs: 60_000 }),
      conntrack: table,
      keepFlowsToTerminating: keep,
      minSyncPeriodMs: 0,
      syncPeriodMs: 30_000,
    });
    const text = () => metrics.registry.metrics();
    const re = /^kubeproxy_conntrack_reconciler_sync_duration_seconds_count\{ip_family="IPv4"\} (\d+)$/m;
    const roundCount = async () => Number(re.exec(await text())?.[1] ?? 0);
    /** Waits (at most 10 s) until the reconciler has finished `n` rounds. */
    const rounds = async (n: number) => {
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        if ((await roundCount()) >= n) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.fail(`the reconciler did not finish round ${n}: ${proxier.syncs.failed} failed syncs`);
    };
    /** Waits until no round ran for 1.5 s: the rounds that look again at drained entries (one a second) stopped. */
    const quiet = async () => {
      for (let last = -1, now = await roundCount(); now !== last; now = await roundCount()) {
        last = now;
        await new Promise((r) => setTimeout(r, 1500));
      }
    };
    const toService = async () =>
      (await table.listUDP("IPv4"))
        .filter((f: ConntrackFlow) => f.orig.dst === CLUSTER_IP)
        .map((f) => ({ sport: f.orig.sport, endpoint: f.reply.src }))
        .sort((a, b) => a.sport - b.sport);
    return { proxier, text, rounds, roundCount, quiet, toService };
  }
  const flowX = { udp: true, sourcePort: 40053 };
  const flowY = { udp: true, sourcePort: 40054 };

  /** Step 1 of both: only B serves, and flow Y goes to B. */
  async function onlyB(proxier: Proxier, rounds: (n: number) => Promise<void>) {
    proxier.onServiceUpdate(undefined, dns);
    proxier.onEndpointSliceUpdate(slice([ready(POD_B)]), false);
    proxier.start();
    await rounds(1);
    assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 1, flowY), ["pod-1"]);
  }

  test("upstream's rule (keepFlowsToTerminating): a terminating endpoint keeps its flows; a removed one's go", async () => {
    const { proxier, text, rounds, toService } = await start(true);
    try {
      await onlyB(proxier, rounds);

      // 2: A is ready and B terminating, so new flows (X) go to A; Y keeps going to B, and
      // the reconciler leaves it, since B still serves.
      proxier.onEndpointSliceUpdate(slice([ready(POD_A), terminating(POD_B)]), false);
      await rounds(2);
      assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 2, flowX), ["pod-0", "pod-0"]);
      assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 1, flowY), ["pod-1"]);
      assert.deepEqual(await toService(), [
        { sport: 40053, endpoint: POD_A },
        { sport: 40054, endpoint: POD_B },
      ]);

      // 3: A goes away. The sync's reconcile deletes X's entry and nothing else.
      proxier.onEndpointSliceUpdate(slice([terminating(POD_B)]), false);
      await rounds(3);
      assert.deepEqual(await toService(), [{ sport: 40054, endpoint: POD_B }]);
      const m = await text();
      assert.match(m, /^kubeproxy_conntrack_reconciler_deleted_entries_total\{ip_family="IPv4"\} 1$/m);
      // X starts over and follows the rules to B.
      assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 2, flowX), ["pod-1", "pod-1"]);
      assert.equal(proxier.syncs.failed, 0);
    } finally {
      await proxier.stop();
    }
  });

  test("by default a terminating endpoint the rules left loses its answered flows within a second: the next datagram follows the rules", async () => {
    const { proxier, text, rounds, roundCount, quiet, toService } = await start(false);
    try {
      await onlyB(proxier, rounds);
      assert.deepEqual(await toService(), [{ sport: 40054, endpoint: POD_B }]);

      // 2: A is ready and B terminating: the rules choose A only, so Y's answered entry to B is given a second to
      // live in the same sync (not deleted: an answer on its way through it still arrives). Once it has gone, Y's
      // next datagram (as a new socket that got Y's port would send it) is A's, while B still lives.
      proxier.onEndpointSliceUpdate(slice([ready(POD_A), terminating(POD_B)]), false);
      await rounds(2);
      assert.match(
        await text(),
        /^kubeproxy_conntrack_reconciler_deleted_entries_total\{ip_family="IPv4"\} 0$/m,
      );
      // Without the shorter timeout the kernel would keep it 30 s.
      for (const deadline = Date.now() + 5000; (await toService()).length > 0; ) {
        assert.ok(Date.now() < deadline, "Y's entry to B is still there 5 s after the round");
        await new Promise((r) => setTimeout(r, 200));
      }
      assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 1, flowY), ["pod-0"]);
      // The round that found Y's entry looks again a second later, and so on until one finds none.
      await quiet();
      assert.ok((await roundCount()) > 2, "a round between syncs looked again at the drained entry");

      // 3: A goes (its flow Y with it, upstream's rule) and only B, terminating, is left: the rules fall back to B,
      // so X's flow to B is made and kept, also by the next round (a gone endpoint's change triggers it).
      const settled = await roundCount();
      proxier.onEndpointSliceUpdate(slice([terminating(POD_B)]), false);
      await rounds(settled + 1);
      assert.deepEqual(await toService(), []);
      assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 2, flowX), ["pod-1", "pod-1"]);
      const before = await roundCount();
      proxier.onEndpointSliceUpdate(slice([terminating(POD_B), gone("10.180.0.3")]), false);
      await rounds(before + 1);
      assert.deepEqual(await toService(), [{ sport: 40053, endpoint: POD_B }]);
      assert.equal(proxier.syncs.failed, 0);
    } finally {
      await proxier.stop();
    }
  });
});
