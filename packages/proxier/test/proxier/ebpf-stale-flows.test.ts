// When ebpf mode ends stale socket-balanced flows: after each successful sync, the eBPF backend gets the state the
// last successful sync programmed and this one's, and asks its SocketEnder to end the flows that went; never after a
// failed sync, whose change the next successful one still sees. The ended count feeds the metric; a failing ender
// leaves the sync successful.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { FakeClock } from "@switchyard/kube/testing";
import { FakeBPFMaps } from "../../src/ebpf/fake.js";
import type { BPFMapStore } from "../../src/ebpf/map-store.js";
import type { SocketEnder, SocketEndResult } from "../../src/ebpf/socket-ender.js";
import { flowName, type StaleFlow } from "../../src/ebpf/stale-flows.js";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { EBPFProxyBackend } from "../../src/proxier/ebpf-backend.js";
import { Proxier } from "../../src/proxier/proxier.js";
import { makeService, makeSlice, NODE_NAME } from "../../src/testing/fixtures.js";
import { ebpfOptions } from "../ebpf/helpers.js";

/** Records each run's flows; ends as many sockets per flow as `sockets` says (none unless told). */
class RecordingEnder implements SocketEnder {
  runs: string[][] = [];
  sockets = 1;
  failure: Error | undefined;
  async end(_family: IPFamily, flows: readonly StaleFlow[]): Promise<SocketEndResult> {
    this.runs.push(flows.map(flowName));
    if (this.failure) throw this.failure;
    const endedByFlow = flows.map((flow) => ({ flow, ended: this.sockets }));
    return { ended: this.sockets * flows.length, endedByFlow, namespaces: 1, errors: [] };
  }
}

const dns = makeService("ns1", "dns", {
  clusterIP: "172.30.0.10",
  ports: [{ name: "dns", port: 53, protocol: "UDP" }],
});
const web = makeService("ns1", "web", { clusterIP: "172.30.0.20", ports: [{ name: "http", port: 80 }] });
const slice = (svc: "dns" | "web", ips: string[]) =>
  makeSlice(
    "ns1",
    svc,
    "a",
    ips.map((ip) => ({ addresses: [ip] })),
    [svc === "dns" ? { name: "dns", port: 53, protocol: "UDP" } : { name: "http", port: 80 }],
  );

function setup() {
  const time = new FakeClock(1_000_000);
  const fake = new FakeBPFMaps();
  let fail = false;
  const maps: BPFMapStore = {
    write: async (family, steps) => {
      if (fail) throw new Error("injected map write failure");
      await fake.write(family, steps);
    },
    dump: (family, map) => fake.dump(family, map),
  };
  const metrics = newProxyMetrics("ebpf");
  const sockets = new RecordingEnder();
  const errors: string[] = [];
  const proxier = new Proxier({
    nodeName: NODE_NAME,
    backend: new EBPFProxyBackend({ options: ebpfOptions(), maps, metrics, sockets }),
    metrics,
    health: new ProxyHealth({ clock: time, healthTimeoutMs: 60_000 }),
    minSyncPeriodMs: 1000,
    syncPeriodMs: 30_000,
    clock: time,
    logger: { info() {}, warn() {}, error: (msg) => errors.push(msg) },
  });
  return { time, metrics, sockets, proxier, errors, failNext: (f: boolean) => (fail = f) };
}

const destroyed = async (t: ReturnType<typeof setup>) =>
  /\{ip_family="IPv4"\} (\d+)$/m.exec(
    await t.metrics.registry.getSingleMetricAsString(
      "kubeproxy_sync_proxy_rules_bpf_sockets_destroyed_total",
    ),
  )?.[1];

test("after a sync that took a UDP backend away, its flow's sockets are ended and counted", async () => {
  const t = setup();
  t.proxier.onServiceUpdate(undefined, dns);
  t.proxier.onServiceUpdate(undefined, web);
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.1", "10.180.0.2"]), false);
  t.proxier.onEndpointSliceUpdate(slice("web", ["10.180.0.5"]), false);
  t.proxier.start();
  await t.time.advance(0);
  assert.deepEqual(t.sockets.runs, [], "the first sync has nothing before it to compare with");

  // A TCP endpoint going ends nothing; nor does a UDP endpoint added.
  t.proxier.onEndpointSliceUpdate(slice("web", ["10.180.0.6"]), false);
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.1", "10.180.0.2", "10.180.0.3"]), false);
  await t.time.advance(1000);
  assert.equal(t.proxier.syncs.ok, 2);
  assert.deepEqual(t.sockets.runs, []);

  t.sockets.sockets = 3;
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.2", "10.180.0.3"]), false);
  await t.time.advance(1000);
  assert.deepEqual(t.sockets.runs, [["172.30.0.10:53 -> 10.180.0.1:53"]]);
  assert.equal(await destroyed(t), "3");
  await t.proxier.stop();
});

test("a failed sync ends nothing; the next successful one ends what changed since the last programmed state", async () => {
  const t = setup();
  t.proxier.onServiceUpdate(undefined, dns);
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.1", "10.180.0.2"]), false);
  t.proxier.start();
  await t.time.advance(0);

  t.failNext(true);
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.2"]), false);
  await t.time.advance(1000);
  assert.equal(t.proxier.syncs.failed, 1);
  assert.deepEqual(t.sockets.runs, []);

  // The retry is full and carries no endpoint change of its own; the flow is still judged stale.
  t.failNext(false);
  await t.time.advance(30_000);
  assert.equal(t.proxier.syncs.ok, 2);
  assert.deepEqual(t.sockets.runs, [["172.30.0.10:53 -> 10.180.0.1:53"]]);
  await t.proxier.stop();
});

test("an ender that fails is logged and the sync stays successful", async () => {
  const t = setup();
  t.proxier.onServiceUpdate(undefined, dns);
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.1"]), false);
  t.proxier.start();
  await t.time.advance(0);

  t.sockets.failure = new Error("injected");
  t.proxier.onServiceUpdate(dns, undefined);
  await t.time.advance(1000);
  assert.deepEqual(t.sockets.runs, [["172.30.0.10:53 -> 10.180.0.1:53"]], "a deleted Service's flows go too");
  assert.deepEqual(t.proxier.syncs, { ok: 2, failed: 0, full: 1 });
  assert.deepEqual(t.errors, ["ending stale flows failed"]);
  assert.equal(await destroyed(t), undefined);
  await t.proxier.stop();
});
