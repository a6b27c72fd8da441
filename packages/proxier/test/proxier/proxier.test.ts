// The Proxier on the fake nftables table and a fake clock: events become syncs within the
// runner's bounds, partial syncs follow full ones, a failed sync is retried after syncPeriod
// as a full sync, and /healthz fails while a change waits longer than 2 × syncPeriod.
import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeClock } from "@switchyard/kube/testing";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { FakeNFTables } from "../../src/nftables/fake.js";
import { tracePacket } from "../../src/nftables/tracer.js";
import type { Transaction } from "../../src/nftables/transaction.js";
import { MetaProxier } from "../../src/proxier/meta-proxier.js";
import { NFTablesProxyBackend } from "../../src/proxier/nftables-backend.js";
import { Proxier } from "../../src/proxier/proxier.js";
import {
  makeService,
  makeSlice,
  NODE_IP,
  NODE_NAME,
  nftOptions,
  svc1,
  svc1Slice,
} from "../../src/testing/fixtures.js";

const SYNC_PERIOD = 30_000;

function setup() {
  const time = new FakeClock(1_000_000);
  const fake = new FakeNFTables("ip", "kube-proxy");
  let failures = 0;
  const runs: Transaction[] = [];
  const nft = {
    run(tx: Transaction) {
      if (failures > 0) {
        failures--;
        throw new Error("injected nft failure");
      }
      runs.push(tx);
      fake.run(tx);
    },
    check: (tx: Transaction) => fake.check(tx),
  };
  const metrics = newProxyMetrics("nftables");
  const health = new ProxyHealth({ clock: time, healthTimeoutMs: 2 * SYNC_PERIOD });
  const backend = new NFTablesProxyBackend({ options: nftOptions(), nft, metrics });
  const proxier = new Proxier({
    nodeName: NODE_NAME,
    backend,
    metrics,
    health,
    minSyncPeriodMs: 1000,
    syncPeriodMs: SYNC_PERIOD,
    clock: time,
  });
  const meta = new MetaProxier([proxier], health);
  const failNext = (n: number) => {
    failures = n;
  };
  const trace = () =>
    tracePacket(fake, [NODE_IP], { sourceIP: "10.180.0.9", destIP: "172.30.0.41", destPort: 80 }).output;
  return { time, fake, runs, metrics, health, proxier, meta, failNext, trace };
}

const svc = svc1;
const slice = svc1Slice;

test("events before start wait; start syncs fully, later changes sync partially", async () => {
  const t = setup();
  t.meta.onServiceUpdate(undefined, svc);
  t.meta.onEndpointSliceUpdate(slice(["10.180.0.1"]), false);
  await t.time.advance(5000);
  assert.equal(t.runs.length, 0);
  t.meta.start();
  await t.time.advance(0);
  assert.deepEqual(t.proxier.syncs, { ok: 1, failed: 0, full: 1 });
  assert.equal(t.trace(), "10.180.0.1:80");

  t.meta.onEndpointSliceUpdate(slice(["10.180.0.1", "10.180.0.2"]), false);
  t.meta.onEndpointSliceUpdate(slice(["10.180.0.2"]), false);
  await t.time.advance(1000);
  // Both changes within minSyncPeriod land in one partial sync.
  assert.deepEqual(t.proxier.syncs, { ok: 2, failed: 0, full: 1 });
  assert.equal(t.trace(), "10.180.0.2:80");
  await t.meta.stop();
});

test("slices and Services labelled for another proxy or headless are ignored", async () => {
  const t = setup();
  t.meta.start();
  await t.time.advance(0);
  const other = makeService("ns1", "svc1", svc.spec);
  other.metadata = { ...other.metadata, labels: { "service.kubernetes.io/service-proxy-name": "other" } };
  t.meta.onServiceUpdate(undefined, other);
  t.meta.onEndpointSliceUpdate(
    {
      ...slice(["10.180.0.1"]),
      metadata: { ...slice([]).metadata, labels: { "service.kubernetes.io/headless": "" } },
    },
    false,
  );
  await t.time.advance(2000);
  assert.equal(t.proxier.syncs.ok, 1, "nothing was queued");
  assert.doesNotMatch(t.fake.dump(), /ns1\/svc1/);
  // The same Service without the label is programmed.
  t.meta.onServiceUpdate(other, svc);
  await t.time.advance(2000);
  assert.match(t.fake.dump(), /ns1\/svc1/);
  await t.meta.stop();
});

test("a failed sync is retried after syncPeriod, in full; /healthz fails after 2 × syncPeriod", async () => {
  const t = setup();
  t.meta.onServiceUpdate(undefined, svc);
  t.meta.onEndpointSliceUpdate(slice(["10.180.0.1"]), false);
  t.meta.start();
  await t.time.advance(0);
  assert.equal(t.health.healthz().status, 200);

  t.failNext(3);
  t.meta.onEndpointSliceUpdate(slice(["10.180.0.3"]), false);
  await t.time.advance(1000);
  assert.equal(t.proxier.syncs.failed, 1);
  assert.equal(t.trace(), "10.180.0.1:80", "the old rules stay in place");
  await t.time.advance(SYNC_PERIOD);
  assert.equal(t.proxier.syncs.failed, 2);
  assert.equal(t.health.healthz().status, 200, "queued for less than 2 × syncPeriod");
  await t.time.advance(SYNC_PERIOD);
  assert.equal(t.proxier.syncs.failed, 3);
  assert.equal(t.health.healthz().status, 503);
  await t.time.advance(SYNC_PERIOD);
  assert.deepEqual(t.proxier.syncs, { ok: 2, failed: 3, full: 2 }, "the retry is a full sync");
  assert.equal(t.health.healthz().status, 200);
  assert.equal(t.trace(), "10.180.0.3:80");
  const failures = await t.metrics.registry.getSingleMetricAsString(
    "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
  );
  assert.match(failures, /ip_family="IPv4"} 3/);
  await t.meta.stop();
});
