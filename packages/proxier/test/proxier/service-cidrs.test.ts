// ServiceCIDR objects into the nftables proxier: the union of all objects, split by family,
// and a change forces a full sync that rewrites the "Drop traffic to unallocated ClusterIPs"
// rule at once (kube-proxy v1.37 waits for its next full sync).
import assert from "node:assert/strict";
import { test } from "node:test";
import { FakeClock } from "@switchyard/kube/testing";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { FakeNFTables } from "../../src/nftables/fake.js";
import { MetaProxier } from "../../src/proxier/meta-proxier.js";
import { NFTablesProxyBackend } from "../../src/proxier/nftables-backend.js";
import { Proxier } from "../../src/proxier/proxier.js";
import { allServiceCIDRs, serviceCIDRsOfFamily } from "../../src/proxier/service-cidrs.js";
import { NODE_NAME, nftOptions } from "../../src/testing/fixtures.js";

test("allServiceCIDRs: the union of every object, sorted, once each", () => {
  const objects = [
    { spec: { cidrs: ["10.96.0.0/16", "fd00:96::/112"] } },
    { spec: { cidrs: ["10.97.0.0/24", "10.96.0.0/16"] } },
    {},
  ];
  assert.deepEqual(allServiceCIDRs(objects), ["10.96.0.0/16", "10.97.0.0/24", "fd00:96::/112"]);
  // Deleting one of two objects that share a CIDR keeps it (kube-proxy's running set would not).
  assert.deepEqual(allServiceCIDRs(objects.slice(1)), ["10.96.0.0/16", "10.97.0.0/24"]);
});

test("serviceCIDRsOfFamily: each family keeps its own; garbage is reported, not kept", () => {
  const all = ["10.96.0.0/16", "fd00:96::/112", "10.97.0.0/24", "not-a-cidr", "10.1.2.3"];
  assert.deepEqual(serviceCIDRsOfFamily(all, "IPv4"), {
    cidrs: ["10.96.0.0/16", "10.97.0.0/24"],
    invalid: ["not-a-cidr", "10.1.2.3"],
  });
  assert.deepEqual(serviceCIDRsOfFamily(all, "IPv6").cidrs, ["fd00:96::/112"]);
});

function setup(family: "IPv4" | "IPv6" = "IPv4") {
  const time = new FakeClock(1_000_000);
  const fake = new FakeNFTables(family === "IPv4" ? "ip" : "ip6", "kube-proxy");
  const metrics = newProxyMetrics("nftables");
  const health = new ProxyHealth({ clock: time, healthTimeoutMs: 60_000 });
  const backend = new NFTablesProxyBackend({
    options: nftOptions(family, { serviceCIDRs: undefined }),
    nft: { run: (tx) => fake.run(tx), check: (tx) => fake.check(tx) },
    metrics,
  });
  const proxier = new Proxier({
    nodeName: NODE_NAME,
    backend,
    metrics,
    health,
    minSyncPeriodMs: 1000,
    syncPeriodMs: 30_000,
    clock: time,
  });
  const meta = new MetaProxier([proxier], health);
  const dropRule = () => fake.dump().match(/^.*cluster-ips-check.*drop.*$/m)?.[0];
  return { time, fake, proxier, meta, dropRule };
}

test("a ServiceCIDR change forces a full sync that rewrites the drop rule", async () => {
  const t = setup();
  t.meta.onServiceCIDRs(["10.96.0.0/16", "fd00:96::/112"]);
  t.meta.start();
  await t.time.advance(0);
  assert.deepEqual(t.proxier.syncs, { ok: 1, failed: 0, full: 1 });
  assert.match(t.dropRule() ?? "", /ip daddr \{ 10\.96\.0\.0\/16 \} drop/);

  t.meta.onServiceCIDRs(["10.97.0.0/24", "10.96.0.0/16", "fd00:96::/112"]);
  await t.time.advance(1000);
  assert.deepEqual(t.proxier.syncs, { ok: 2, failed: 0, full: 2 });
  assert.match(t.dropRule() ?? "", /ip daddr \{ 10\.96\.0\.0\/16,10\.97\.0\.0\/24 \} drop/);

  // The same set again, or another family's change only, is not a change for this proxier.
  t.meta.onServiceCIDRs(["10.96.0.0/16", "10.97.0.0/24", "fd00:97::/112"]);
  await t.time.advance(5000);
  assert.equal(t.proxier.syncs.ok, 2);

  // No ServiceCIDR of this family left: the rule goes (its chain is flushed on full syncs).
  t.meta.onServiceCIDRs(["fd00:96::/112"]);
  await t.time.advance(1000);
  assert.deepEqual(t.proxier.syncs, { ok: 3, failed: 0, full: 3 });
  assert.equal(t.dropRule(), undefined);
  await t.meta.stop();
});

test("the IPv6 proxier writes only the IPv6 CIDRs", async () => {
  const t = setup("IPv6");
  t.meta.onServiceCIDRs(["10.96.0.0/16", "fd00:96::/112"]);
  t.meta.start();
  await t.time.advance(0);
  assert.match(t.dropRule() ?? "", /ip6 daddr \{ fd00:96::\/112 \} drop/);
  await t.meta.stop();
});

test("a change that arrives while a sync runs still gets a full sync of its own", async () => {
  const t = setup();
  t.meta.start();
  // The first sync is under way (awaiting the backend) when the CIDRs arrive.
  t.meta.onServiceCIDRs(["10.96.0.0/16"]);
  await t.time.advance(0);
  await t.time.advance(1000);
  assert.deepEqual(t.proxier.syncs, { ok: 2, failed: 0, full: 2 });
  assert.match(t.dropRule() ?? "", /10\.96\.0\.0\/16/);
  await t.meta.stop();
});
