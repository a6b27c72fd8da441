import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { withLameduck } from "../../src/scenarios/kit/corefile.js";
import { histogram, metricSum } from "../../src/scenarios/kit/prom.js";
import { sendsTo } from "../../src/scenarios/kit/rules.js";
import { withMinSyncPeriod } from "../../src/scenarios/proxy-down/sync-batching.js";
import { proxyWrites } from "../../src/scenarios/scale/nft-monitor.js";

// The pure parts of the proxy and DNS scenarios; the scenarios themselves run in proxy-dns.e2e.test.ts.
describe("proxy and DNS scenario parts", () => {
  test("sendsTo: an iptables KUBE-SEP chain counts only while a Service chain jumps to it", () => {
    const sep = "-A KUBE-SEP-AAA -p udp -m udp -j DNAT --to-destination 10.244.1.5:53";
    const jump = "-A KUBE-SVC-BBB -m statistic --mode random --probability 0.5 -j KUBE-SEP-AAA";
    assert.equal(sendsTo([sep, jump].join("\n"), "10.244.1.5"), true);
    assert.equal(sendsTo(sep, "10.244.1.5"), false);
    assert.equal(sendsTo([sep, jump].join("\n"), "10.244.1.50"), false);
  });

  test("sendsTo: nftables Service rules in the kube-proxy table, not orphaned endpoint chains", () => {
    const table = (body: string) => `table ip kube-proxy {\n${body}\n}`;
    const svc = (rule: string) => `\tchain service-X-kube-system/kube-dns/udp/dns {\n\t\t${rule}\n\t}`;
    assert.ok(
      sendsTo(
        table(
          svc(
            "meta l4proto udp dnat ip to numgen random mod 2 map { 0 : 10.244.1.5 . 53, 1 : 10.244.2.3 . 53 }",
          ),
        ),
        "10.244.1.5",
      ),
    );
    assert.ok(sendsTo(table(svc("meta l4proto udp dnat to 10.244.1.5:53")), "10.244.1.5"));
    const orphan =
      "\tchain endpoint-Y-kube-system/kube-dns/udp/dns__10.244.1.5/53 {\n\t\tmeta l4proto udp dnat to 10.244.1.5:53\n\t}";
    assert.equal(sendsTo(table(orphan), "10.244.1.5"), false);
    // iptables-nft's own tables show up in `nft list ruleset` too; they are judged by the iptables dump.
    assert.equal(
      sendsTo(`table ip nat {\n${svc("meta l4proto udp dnat to 10.244.1.5:53")}\n}`, "10.244.1.5"),
      false,
    );
  });

  test("withLameduck edits the one line, and refuses a Corefile without it or a bad duration", () => {
    const corefile = ".:53 {\n    health {\n       lameduck 5s\n    }\n}\n";
    assert.match(withLameduck(corefile, "0s"), /^ {7}lameduck 0s$/m);
    assert.throws(() => withLameduck(".:53 {\n    health\n}\n", "5s"), /no `lameduck` line/);
    assert.throws(() => withLameduck(corefile, "five"), /not a duration/);
  });

  test("withMinSyncPeriod sets both sections' lines", () => {
    const conf = "iptables:\n  minSyncPeriod: 1s\n  syncPeriod: 30s\nnftables:\n  minSyncPeriod: 1s\n";
    assert.equal(withMinSyncPeriod(conf, "1ms").match(/minSyncPeriod: 1ms/g)?.length, 2);
    assert.throws(() => withMinSyncPeriod("mode: iptables\n", "1s"), /no minSyncPeriod line/);
  });

  test("metrics: sums over label sets, filters by labels, reads histograms", () => {
    const text = [
      "# HELP kubeproxy_sync_proxy_rules_duration_seconds x",
      'kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv4"} 3',
      'kubeproxy_sync_proxy_rules_duration_seconds_count{ip_family="IPv6"} 2',
      'kubeproxy_sync_proxy_rules_duration_seconds_sum{ip_family="IPv4"} 0.5',
      'kubeproxy_sync_proxy_rules_iptables_last{ip_family="IPv4",table="nat"} 40',
      'kubeproxy_sync_proxy_rules_iptables_last{ip_family="IPv4",table="filter"} 2',
    ].join("\n");
    assert.deepEqual(histogram(text, "kubeproxy_sync_proxy_rules_duration_seconds"), { count: 5, sum: 0.5 });
    assert.equal(metricSum(text, "kubeproxy_sync_proxy_rules_iptables_last", { table: "nat" }), 40);
    assert.equal(metricSum(text, "kubeproxy_sync_proxy_rules_iptables"), 0, "a prefix is not a name");
  });

  test("proxyWrites counts the proxy's tables only", () => {
    const lines = [
      "add element ip kube-proxy service-ips { 10.96.0.1 . tcp . 443 : goto service-X }",
      "delete rule ip nat KUBE-SERVICES handle 12",
      "add rule ip raw PREROUTING counter",
      "# new generation 42 by process 7 (nft)",
    ];
    assert.equal(proxyWrites(lines).lines, 2);
  });
});
