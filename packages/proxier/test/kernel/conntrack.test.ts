// Stale UDP flows for real: the Proxier programs nftables in a namespace and reconciles the
// node's conntrack table through the conntrack CLI after each sync that changed UDP
// endpoints. A client keeps UDP flows (fixed source ports) to a ClusterIP; every datagram
// is answered, so no step waits on a timeout.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import type { Endpoint } from "kubernetes-types/discovery/v1.js";
import { NftApplier } from "../../src/apply/nft-applier.js";
import { ConntrackCLI } from "../../src/conntrack/conntrack.js";
import type { ConntrackFlow } from "../../src/conntrack/flow.js";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { NFTablesProxyBackend } from "../../src/proxier/nftables-backend.js";
import { Proxier } from "../../src/proxier/proxier.js";
import { systemClock } from "../../src/sync/timers.js";
import { makeService, makeSlice, NODE_NAME, nftOptions } from "../fixtures.js";
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

  test("after endpoint A is removed, the flow DNATed to A is deleted and the one to B is kept", async () => {
    const metrics = newProxyMetrics("nftables");
    const table = new ConntrackCLI(topo.nodeExec);
    const proxier = new Proxier({
      nodeName: NODE_NAME,
      backend: new NFTablesProxyBackend({
        options: nftOptions(),
        nft: new NftApplier({ exec: topo.nodeExec }),
        metrics,
      }),
      metrics,
      health: new ProxyHealth({ clock: systemClock, healthTimeoutMs: 60_000 }),
      conntrack: table,
      minSyncPeriodMs: 0,
      syncPeriodMs: 30_000,
    });
    const text = () => metrics.registry.metrics();
    /** Waits (at most 10 s) until the reconciler has finished `n` rounds. */
    const rounds = async (n: number) => {
      const re = /^kubeproxy_conntrack_reconciler_sync_duration_seconds_count\{ip_family="IPv4"\} (\d+)$/m;
      for (const deadline = Date.now() + 10_000; Date.now() < deadline; ) {
        if (Number(re.exec(await text())?.[1] ?? 0) >= n) return;
        await new Promise((r) => setTimeout(r, 20));
      }
      assert.fail(`the reconciler did not finish round ${n}: ${proxier.syncs.failed} failed syncs`);
    };
    const toService = async () =>
      (await table.listUDP("IPv4"))
        .filter((f: ConntrackFlow) => f.orig.dst === CLUSTER_IP)
        .map((f) => ({
          sport: f.orig.sport,
          endpoint: f.reply.src,
        }));
    const flowX = { udp: true, sourcePort: 40053 };
    const flowY = { udp: true, sourcePort: 40054 };
    try {
      // 1: only B serves; flow Y goes to B.
      proxier.onServiceUpdate(undefined, dns);
      proxier.onEndpointSliceUpdate(slice([ready(POD_B)]), false);
      proxier.start();
      await rounds(1);
      assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 1, flowY), ["pod-1"]);

      // 2: A is ready and B terminating, so new flows (X) go to A; Y keeps going to B, and
      // the reconciler leaves it, since B still serves.
      proxier.onEndpointSliceUpdate(slice([ready(POD_A), terminating(POD_B)]), false);
      await rounds(2);
      assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 2, flowX), ["pod-0", "pod-0"]);
      assert.deepEqual(await topo.probe(CLUSTER_IP, 80, 1, flowY), ["pod-1"]);
      assert.deepEqual(
        (await toService()).sort((a, b) => a.sport - b.sport),
        [
          { sport: 40053, endpoint: POD_A },
          { sport: 40054, endpoint: POD_B },
        ],
      );

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
});
