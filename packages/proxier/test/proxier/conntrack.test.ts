// When the Proxier runs the conntrack reconciler: after a successful sync that applied an
// endpoint change of a Service with a UDP port (upstream's ConntrackCleanupRequired), with
// the maps that sync programmed, and never after a failed one; and again each second while entries to a
// terminating endpoint the rules left remain (answered ones to expire, ones waiting for their reply).
import assert from "node:assert/strict";
import { test } from "node:test";
import type { IPFamily } from "@switchyard/basics";
import { FakeClock } from "@switchyard/kube/testing";
import type { ConntrackResult, ConntrackTable } from "../../src/conntrack/conntrack.js";
import type { ConntrackFlow } from "../../src/conntrack/flow.js";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { FakeNFTables } from "../../src/nftables/fake.js";
import type { Transaction } from "../../src/nftables/transaction.js";
import { NFTablesProxyBackend } from "../../src/proxier/nftables-backend.js";
import { Proxier } from "../../src/proxier/proxier.js";
import { makeService, makeSlice, NODE_NAME, nftOptions } from "../../src/testing/fixtures.js";

/** A conntrack table in memory: lists what it holds, deletes what it is asked to; expiring ones are noted. */
class FakeTable implements ConntrackTable {
  entries: ConntrackFlow[] = [];
  lists = 0;
  async listUDP(_family: IPFamily): Promise<ConntrackFlow[]> {
    this.lists++;
    return [...this.entries];
  }
  async delete(_family: IPFamily, flows: readonly ConntrackFlow[]): Promise<ConntrackResult> {
    const before = this.entries.length;
    this.entries = this.entries.filter((e) => !flows.includes(e));
    return { deleted: before - this.entries.length, errors: [] };
  }
  expiring: ConntrackFlow[] = [];
  async expire(_family: IPFamily, flows: readonly ConntrackFlow[]): Promise<ConntrackResult> {
    this.expiring.push(...flows);
    return { deleted: flows.length, errors: [] };
  }
}

const flowTo = (endpoint: string, sport: number): ConntrackFlow => ({
  protocol: "udp",
  orig: { src: "10.180.0.99", dst: "172.30.0.10", sport, dport: 53 },
  reply: { src: endpoint, dst: "10.180.0.99", sport: 53, dport: sport },
});

const dns = makeService("ns1", "dns", {
  clusterIP: "172.30.0.10",
  ports: [{ name: "dns", port: 53, protocol: "UDP" }],
});
const web = makeService("ns1", "web", { clusterIP: "172.30.0.20", ports: [{ name: "http", port: 80 }] });
const slice = (svc: string, ips: string[], protocol: "UDP" | "TCP") =>
  makeSlice(
    "ns1",
    svc,
    "a",
    ips.map((ip) => ({ addresses: [ip] })),
    [{ name: svc === "dns" ? "dns" : "http", port: svc === "dns" ? 53 : 80, protocol }],
  );

function setup(o: { keepFlowsToTerminating?: boolean } = {}) {
  const time = new FakeClock(1_000_000);
  const fake = new FakeNFTables("ip", "kube-proxy");
  let fail = false;
  const nft = {
    run(tx: Transaction) {
      if (fail) throw new Error("injected nft failure");
      fake.run(tx);
    },
    check: (tx: Transaction) => fake.check(tx),
  };
  const metrics = newProxyMetrics("nftables");
  const table = new FakeTable();
  const proxier = new Proxier({
    nodeName: NODE_NAME,
    backend: new NFTablesProxyBackend({ options: nftOptions(), nft, metrics }),
    metrics,
    health: new ProxyHealth({ clock: time, healthTimeoutMs: 60_000 }),
    conntrack: table,
    ...o,
    minSyncPeriodMs: 1000,
    syncPeriodMs: 30_000,
    clock: time,
  });
  return { time, table, metrics, proxier, failNext: (f: boolean) => (fail = f) };
}

test("the reconciler runs after syncs that changed UDP endpoints, on the synced maps", async () => {
  const t = setup();
  const stale = flowTo("10.180.0.1", 40001);
  const live = flowTo("10.180.0.2", 40002);
  // Left over from before a restart: the first sync has every endpoint as new, so it cleans.
  t.table.entries = [stale, live];
  t.proxier.onServiceUpdate(undefined, dns);
  t.proxier.onServiceUpdate(undefined, web);
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.2"], "UDP"), false);
  t.proxier.onEndpointSliceUpdate(slice("web", ["10.180.0.5"], "TCP"), false);
  t.proxier.start();
  await t.time.advance(0);
  assert.equal(t.table.lists, 1);
  assert.deepEqual(t.table.entries, [live]);

  // A TCP-only endpoint change does not list the table.
  t.proxier.onEndpointSliceUpdate(slice("web", ["10.180.0.6"], "TCP"), false);
  await t.time.advance(1000);
  assert.equal(t.proxier.syncs.ok, 2);
  assert.equal(t.table.lists, 1);

  // Neither does a Service change alone (upstream looks at endpoint changes only).
  t.proxier.onServiceUpdate(dns, { ...dns, metadata: { ...dns.metadata, labels: { a: "b" } } });
  await t.time.advance(1000);
  assert.equal(t.table.lists, 1);

  // The serving endpoint is replaced: its flow is now stale.
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.3"], "UDP"), false);
  await t.time.advance(1000);
  assert.equal(t.table.lists, 2);
  assert.deepEqual(t.table.entries, []);
  const text = await t.metrics.registry.metrics();
  assert.match(text, /^kubeproxy_conntrack_reconciler_deleted_entries_total\{ip_family="IPv4"\} 2$/m);
  assert.match(text, /^kubeproxy_conntrack_reconciler_sync_duration_seconds_count\{ip_family="IPv4"\} 2$/m);
  await t.proxier.stop();
});

test("a failed sync does not reconcile, and its retry does not either (as upstream)", async () => {
  const t = setup();
  t.proxier.onServiceUpdate(undefined, dns);
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.2"], "UDP"), false);
  t.proxier.start();
  await t.time.advance(0);
  assert.equal(t.table.lists, 1);

  t.table.entries = [flowTo("10.180.0.2", 40002)];
  t.failNext(true);
  t.proxier.onEndpointSliceUpdate(slice("dns", ["10.180.0.3"], "UDP"), false);
  await t.time.advance(1000);
  assert.equal(t.proxier.syncs.failed, 1);
  assert.equal(t.table.lists, 1);
  // The retry finds the change already applied to the maps, so nothing asks for a cleanup;
  // the stale flow waits for the next UDP endpoint change (or its timeout).
  t.failNext(false);
  await t.time.advance(30_000);
  assert.equal(t.proxier.syncs.ok, 2);
  assert.equal(t.table.lists, 1);
  await t.proxier.stop();
});

/** dns's slice: 10.180.0.2 ready, 10.180.0.3 terminating but still serving. */
function oneTerminating() {
  return makeSlice(
    "ns1",
    "dns",
    "a",
    [
      { addresses: ["10.180.0.2"] },
      { addresses: ["10.180.0.3"], conditions: { ready: false, serving: true, terminating: true } },
    ],
    [{ name: "dns", port: 53, protocol: "UDP" }],
  );
}

test("entries to a drained endpoint are looked at again each second until a round finds none", async () => {
  const t = setup();
  // A lookup the old rules sent to the terminating endpoint, its reply still on the way when the round lists.
  const inFlight = { ...flowTo("10.180.0.3", 40003), unreplied: true };
  t.table.entries = [inFlight];
  t.proxier.onServiceUpdate(undefined, dns);
  t.proxier.onEndpointSliceUpdate(oneTerminating(), false);
  t.proxier.start();
  await t.time.advance(0);
  assert.equal(t.table.lists, 1);
  assert.deepEqual(t.table.expiring, [], "an entry waiting for its reply is left to get it");

  // The reply came; no endpoint change follows, yet a second later the entry is set to expire.
  const answered = flowTo("10.180.0.3", 40003);
  t.table.entries = [answered];
  await t.time.advance(1000);
  assert.equal(t.table.lists, 2);
  assert.deepEqual(t.table.expiring, [answered]);

  // A new lookup through it renewed its timeout: the next round shortens it again.
  await t.time.advance(1000);
  assert.equal(t.table.lists, 3);
  assert.deepEqual(t.table.expiring, [answered, answered]);

  // It expired: one more round finds nothing to drain, and then the rounds stop.
  t.table.entries = [];
  await t.time.advance(1000);
  assert.equal(t.table.lists, 4);
  await t.time.advance(10_000);
  assert.equal(t.table.lists, 4);
  assert.equal(t.proxier.syncs.ok, 1, "the rounds ran between syncs, not as syncs");
  await t.proxier.stop();
});

test("with upstream's rule (keepFlowsToTerminating) a terminating endpoint's entries bring no extra rounds", async () => {
  const t = setup({ keepFlowsToTerminating: true });
  t.table.entries = [flowTo("10.180.0.3", 40003)];
  t.proxier.onServiceUpdate(undefined, dns);
  t.proxier.onEndpointSliceUpdate(oneTerminating(), false);
  t.proxier.start();
  await t.time.advance(0);
  await t.time.advance(5000);
  assert.equal(t.table.lists, 1);
  assert.deepEqual(t.table.expiring, []);
  await t.proxier.stop();
});
