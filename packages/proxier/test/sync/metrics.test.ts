// Metric names, labels and buckets as upstream has them, and what one sync records.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { recordConntrackReconcile, recordQueued, recordSync } from "../../src/metrics/record.js";

const names = async (mode: "iptables" | "nftables" | "ipvs") =>
  (await newProxyMetrics(mode).registry.getMetricsAsJSON()).map((m) => m.name).sort();

describe("proxy metrics", () => {
  test("nftables mode registers the core set, the full/partial sync histograms and its own failure counters, no iptables ones", async () => {
    const got = await names("nftables");
    for (const n of [
      "kubeproxy_sync_proxy_rules_duration_seconds",
      "kubeproxy_sync_proxy_rules_last_timestamp_seconds",
      "kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds",
      "kubeproxy_network_programming_duration_seconds",
      "kubeproxy_sync_proxy_rules_endpoint_changes_pending",
      "kubeproxy_sync_proxy_rules_endpoint_changes_total",
      "kubeproxy_sync_proxy_rules_service_changes_pending",
      "kubeproxy_sync_proxy_rules_service_changes_total",
      "kubeproxy_sync_proxy_rules_no_local_endpoints_total",
      "kubeproxy_proxy_healthz_total",
      "kubeproxy_proxy_livez_total",
      "kubeproxy_sync_proxy_rules_nftables_sync_failures_total",
      "kubeproxy_sync_proxy_rules_nftables_cleanup_failures_total",
    ]) {
      assert.ok(got.includes(n), `missing ${n}`);
    }
    assert.ok(!got.some((n) => n.includes("iptables")), got.join("\n"));
    // As upstream v1.37.2 registers them for nftables mode too (pkg/proxy/metrics/metrics.go RegisterMetrics).
    assert.ok(got.includes("kubeproxy_sync_full_proxy_rules_duration_seconds"));
    assert.ok(got.includes("kubeproxy_sync_partial_proxy_rules_duration_seconds"));
  });

  test("iptables mode has the full/partial histograms and rule counts by table", async () => {
    const got = await names("iptables");
    for (const n of [
      "kubeproxy_sync_full_proxy_rules_duration_seconds",
      "kubeproxy_sync_partial_proxy_rules_duration_seconds",
      "kubeproxy_sync_proxy_rules_iptables_restore_failures_total",
      "kubeproxy_sync_proxy_rules_iptables_partial_restore_failures_total",
      "kubeproxy_sync_proxy_rules_iptables_total",
      "kubeproxy_sync_proxy_rules_iptables_last",
    ]) {
      assert.ok(got.includes(n), `missing ${n}`);
    }
    assert.ok(!got.some((n) => n.includes("nftables")));
  });

  test("IPVS mode adds only the iptables restore failures to the core set, as upstream", async () => {
    const nftables = await names("nftables");
    const core = nftables.filter((n) => !/nftables|full_proxy|partial_proxy/.test(n));
    assert.deepEqual(
      (await names("ipvs")).filter((n) => !core.includes(n)),
      ["kubeproxy_sync_proxy_rules_iptables_restore_failures_total"],
    );
  });

  test("every mode registers the conntrack reconciler's histogram and counter, with upstream's help", async () => {
    for (const mode of ["iptables", "nftables", "ipvs"] as const) {
      const m = newProxyMetrics(mode);
      recordConntrackReconcile(m, "IPv6", 0.002, 3);
      const text = await m.registry.metrics();
      assert.match(
        text,
        /^# HELP kubeproxy_conntrack_reconciler_sync_duration_seconds \[ALPHA\] ReconcileConntrackFlowsLatency latency in seconds$/m,
      );
      assert.match(
        text,
        /^# HELP kubeproxy_conntrack_reconciler_deleted_entries_total \[ALPHA\] Cumulative conntrack flows deleted by conntrack reconciler$/m,
      );
      assert.match(text, /^kubeproxy_conntrack_reconciler_deleted_entries_total\{ip_family="IPv6"\} 3$/m);
      const les = [
        ...text.matchAll(
          /^kubeproxy_conntrack_reconciler_sync_duration_seconds_bucket\{le="([^"]+)",ip_family="IPv6"\}/gm,
        ),
      ].map((x) => x[1]);
      assert.equal(les.length, 16, mode); // 0.001 × 2^n, 15 bounds, + Inf
      assert.deepEqual([les[0], les[1], les[14], les[15]], ["0.001", "0.002", "16.384", "+Inf"]);
    }
  });

  test("buckets: 15 exponential from 1 ms; network programming from 0 to 5 min", async () => {
    const m = newProxyMetrics("nftables");
    recordSync(m, {
      family: "IPv4",
      ok: true,
      fullSync: true,
      startMs: 1000,
      endMs: 1000,
      triggerTimes: [new Date(0)],
    });
    const text = await m.registry.metrics();
    const les = (name: string) =>
      [...text.matchAll(new RegExp(`^${name}_bucket\\{le="([^"]+)",ip_family="IPv4"\\}`, "gm"))].map(
        (x) => x[1],
      );
    const sync = les("kubeproxy_sync_proxy_rules_duration_seconds");
    assert.equal(sync.length, 16); // 15 bounds + Inf
    assert.equal(sync[0], "0.001");
    assert.equal(sync[14], "16.384");
    const prog = les("kubeproxy_network_programming_duration_seconds");
    assert.equal(prog.length, 82); // 0, 80 bounds, +Inf
    assert.deepEqual(prog.slice(0, 4), ["0", "0.25", "0.5", "1"]);
    assert.equal(prog[80], "300");
    assert.match(text, /^kubeproxy_network_programming_duration_seconds_sum\{ip_family="IPv4"\} 1$/m);
  });

  test("a sync records duration and timestamps; a failure records only the duration", async () => {
    const m = newProxyMetrics("iptables");
    recordSync(m, { family: "IPv4", ok: false, fullSync: false, startMs: 0, endMs: 250 });
    let text = await m.registry.metrics();
    assert.match(text, /^kubeproxy_sync_partial_proxy_rules_duration_seconds_sum\{ip_family="IPv4"\} 0.25$/m);
    assert.doesNotMatch(text, /^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{/m);
    recordSync(m, {
      family: "IPv4",
      ok: true,
      fullSync: true,
      startMs: 10_000,
      endMs: 12_000,
      // A trigger time after the sync is skew and is not observed.
      triggerTimes: [new Date(11_000), new Date(20_000)],
      noLocalEndpoints: { internal: 1, external: 2 },
    });
    text = await m.registry.metrics();
    assert.match(text, /^kubeproxy_sync_proxy_rules_last_timestamp_seconds\{ip_family="IPv4"\} 12$/m);
    assert.match(text, /^kubeproxy_sync_full_proxy_rules_duration_seconds_count\{ip_family="IPv4"\} 1$/m);
    assert.match(text, /^kubeproxy_network_programming_duration_seconds_count\{ip_family="IPv4"\} 1$/m);
    assert.match(
      text,
      /^kubeproxy_sync_proxy_rules_no_local_endpoints_total\{ip_family="IPv4",traffic_policy="external"\} 2$/m,
    );
    recordQueued(m, "IPv4", "endpoints", 13_000, 3);
    text = await m.registry.metrics();
    assert.match(text, /^kubeproxy_sync_proxy_rules_endpoint_changes_total 1$/m);
    assert.match(text, /^kubeproxy_sync_proxy_rules_endpoint_changes_pending 3$/m);
    assert.match(text, /^kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds\{ip_family="IPv4"\} 13$/m);
  });
});
