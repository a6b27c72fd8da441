import assert from "node:assert/strict";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { DashboardCore, type LabObjects } from "../../src/dashboard/dashboard-core.js";
import { dnsPodState, lameduckMsOf } from "../../src/dashboard/dns-view.js";
import { bucketsOf, quantile } from "../../src/dashboard/histogram.js";
import { migrationView } from "../../src/dashboard/migration-view.js";
import { countEndpoints, serviceViews } from "../../src/dashboard/services-view.js";
import {
  MigrationProgressFile,
  migrationProgressPath,
  readMigrationProgress,
} from "../../src/migrate/progress-file.js";
import { corefile, dnsMetrics, dnsPod, type Ep, node, proxyMetrics, service, slice } from "./fixtures.js";

const t0 = Date.parse("2026-12-02T10:00:00Z");
const lab = { runtime: "netns" as const, name: "sy" };
const nodes = [node("node-1", "zone-a"), node("node-2", "zone-b"), node("node-3", "zone-a")];
const hinted = (ip: string, n: string, zone: string): Ep => ({ ip, node: n, zone, hintZones: [zone] });

const objects = (extra: Partial<LabObjects> = {}): LabObjects => ({
  nodes,
  services: [service("shop", "web")],
  slices: [],
  dnsPods: [],
  corefile: corefile("5s"),
  notSynced: [],
  ...extra,
});

describe("Services, slices and endpoints", () => {
  test("each endpoint with its conditions and hints, counted per Service", () => {
    const views = serviceViews(
      [service("shop", "web", { trafficDistribution: "PreferSameZone" }), service("default", "kubernetes")],
      [
        slice("shop", "web", "web-b", [
          { ip: "10.244.2.7", node: "node-2", zone: "zone-b", hintZones: ["zone-b"] },
        ]),
        slice("shop", "web", "web-a", [
          hinted("10.244.1.10", "node-1", "zone-a"),
          {
            ip: "10.244.1.9",
            node: "node-1",
            zone: "zone-a",
            ready: false,
            serving: true,
            terminating: true,
          },
        ]),
        slice("other", "web", "web-x", [hinted("10.244.3.3", "node-3", "zone-a")]),
      ],
    );
    assert.deepEqual(
      views.map((v) => `${v.namespace}/${v.name}`),
      ["default/kubernetes", "shop/web"],
    );
    const web = views[1];
    assert.ok(web);
    assert.equal(web.topology, "PreferSameZone");
    assert.deepEqual(
      web.slices.map((s) => s.name),
      ["web-a", "web-b"],
      "slices of the same name in another namespace are another Service's",
    );
    assert.deepEqual(web.counts, { total: 3, ready: 2, serving: 3, terminating: 1, hinted: 2 });
    assert.equal(web.hints, "all", "every ready endpoint has a hint; the terminating one does not count");
    const [terminating, ready] = web.slices[0]?.endpoints ?? [];
    assert.deepEqual(
      [
        terminating?.addresses,
        terminating?.ready,
        terminating?.serving,
        terminating?.terminating,
        terminating?.hints,
      ],
      [["10.244.1.9"], false, true, true, undefined],
    );
    assert.deepEqual(
      [ready?.pod, ready?.node, ready?.zone, ready?.hints],
      ["pod-10", "node-1", "zone-a", { zones: ["zone-a"], nodes: [] }],
    );
    assert.equal(views[0]?.hints, "none");
  });

  test("one ready endpoint without a hint makes the state 'some', which kube-proxy treats as none", () => {
    const counts = countEndpoints([
      slice("shop", "web", "web-a", [
        hinted("10.0.0.1", "node-1", "zone-a"),
        { ip: "10.0.0.2", node: "node-2", zone: "zone-b" },
      ]),
    ]);
    assert.equal(counts.hinted, 1);
    const [view] = serviceViews(
      [service("shop", "web")],
      [
        slice("shop", "web", "web-a", [
          hinted("10.0.0.1", "node-1", "zone-a"),
          { ip: "10.0.0.2", node: "node-2", zone: "zone-b" },
        ]),
      ],
    );
    assert.equal(view?.hints, "some");
  });

  test("a Service's list of endpoints is bounded across its slices and says how many it left out", () => {
    const eps = (from: number, n: number) =>
      Array.from({ length: n }, (_, i) => ({ ip: `10.0.0.${from + i}`, node: "node-1", zone: "zone-a" }));
    const [view] = serviceViews(
      [service("shop", "web")],
      [slice("shop", "web", "web-a", eps(1, 4)), slice("shop", "web", "web-b", eps(11, 4))],
      5,
    );
    assert.deepEqual(
      view?.slices.map((s) => [s.name, s.endpoints.length, s.hiddenEndpoints]),
      [
        ["web-a", 4, 0],
        ["web-b", 1, 3],
      ],
    );
    assert.equal(view?.counts.total, 8, "counts cover every endpoint");
  });
});

describe("a Service's timeline: when hints dropped and came back", () => {
  test("change points only, with the hint state of each", () => {
    const core = new DashboardCore(lab);
    const all = [hinted("10.0.0.1", "node-1", "zone-a"), hinted("10.0.0.2", "node-2", "zone-b")];
    const record = (eps: Ep[], at: number) =>
      core.recordEndpoints("shop/web", countEndpoints([slice("shop", "web", "web-a", eps)]), at);
    record(all, t0);
    record(all, t0 + 1000); // the same counts: no new point
    // A rollout's new pod is ready before the controller has hinted it.
    record([...all, { ip: "10.0.0.3", node: "node-3", zone: "zone-a" }], t0 + 2000);
    record([...all, hinted("10.0.0.3", "node-3", "zone-a")], t0 + 2500);
    const view = core.view(objects(), t0 + 3000);
    const timeline = view.services.find((s) => s.name === "web")?.timeline ?? [];
    assert.deepEqual(
      timeline.map((p) => [p.at - t0, p.hints, p.ready, p.hinted]),
      [
        [0, "all", 2, 2],
        [2000, "some", 3, 2],
        [2500, "all", 3, 3],
      ],
    );
  });

  test("a Service seen first in a view starts its timeline there; a deleted one's is forgotten", () => {
    const core = new DashboardCore(lab);
    const first = core.view(objects(), t0);
    assert.deepEqual(first.services[0]?.timeline, [
      { at: t0, hints: "none", total: 0, ready: 0, serving: 0, terminating: 0, hinted: 0 },
    ]);
    core.view(objects({ services: [] }), t0 + 1000);
    const again = core.view(objects(), t0 + 2000);
    assert.equal(again.services[0]?.timeline[0]?.at, t0 + 2000);
  });
});

describe("proxies: sync history, network programming latency", () => {
  test("PromQL's histogram_quantile on cumulative buckets", () => {
    const text = proxyMetrics({
      syncs: 0,
      syncSeconds: 0,
      lastSync: 0,
      programming: [
        ["0.1", 50],
        ["0.5", 90],
        ["1", 100],
        ["+Inf", 100],
      ],
    });
    const b = bucketsOf(text, "kubeproxy_network_programming_duration_seconds");
    assert.deepEqual(b.counts, [50, 90, 100, 100]);
    assert.equal(quantile(0.5, b), 0.1);
    assert.ok(Math.abs((quantile(0.99, b) ?? 0) - 0.95) < 1e-9);
    assert.equal(
      quantile(0.99, { le: [1, Number.POSITIVE_INFINITY], counts: [10, 20] }),
      1,
      "+Inf: the last bound",
    );
    assert.equal(quantile(0.99, { le: [1, Number.POSITIVE_INFINITY], counts: [0, 0] }), undefined);
  });

  test("mean sync duration between scrapes (the first scrape's: the syncs before it), last sync time, p50/p99, a restart", () => {
    const core = new DashboardCore(lab);
    const scrape = (at: number, syncs: number, syncSeconds: number) =>
      core.proxyScraped({
        node: "node-1",
        at,
        mode: "nftables",
        rules: { iptablesLegacy: 0, iptablesNft: 0, nftables: 170 },
        error: "",
        metrics: proxyMetrics({
          syncs,
          syncSeconds,
          lastSync: at / 1000 - 1,
          programming: [
            ["0.5", 3],
            ["1", 9],
            ["2", 10],
            ["+Inf", 10],
          ],
        }),
      });
    scrape(t0, 10, 0.5); // what is known at the first scrape: 10 syncs, 50 ms each
    scrape(t0 + 2000, 10, 0.5); // no sync in between: nothing to add
    scrape(t0 + 4000, 14, 0.7); // 4 syncs, 0.2 s: 50 ms each
    scrape(t0 + 6000, 2, 0.01); // restarted: its 2 syncs since, 5 ms each
    scrape(t0 + 8000, 3, 0.04); // 1 sync of 30 ms
    const p = core.view(objects(), t0 + 8000).proxies.find((x) => x.node === "node-1");
    assert.ok(p);
    assert.deepEqual(
      p.syncHistory.map((s) => [s.at - t0, Math.round(s.meanMs), s.syncs]),
      [
        [0, 50, 10],
        [4000, 50, 4],
        [6000, 5, 2],
        [8000, 30, 1],
      ],
    );
    assert.equal(p.mode, "nftables");
    assert.equal(p.lastSyncAt, t0 + 7000);
    assert.equal(p.syncs, 3);
    assert.deepEqual(p.rules, { iptablesLegacy: 0, iptablesNft: 0, nftables: 170 });
    assert.equal(p.programming.count, 10);
    assert.ok(Math.abs((p.programming.p50Ms ?? 0) - (500 + 500 * (2 / 6))) < 1e-6);
    assert.ok(Math.abs((p.programming.p99Ms ?? 0) - 1900) < 1e-6);
    const silent = core.view(objects(), t0).proxies.find((x) => x.node === "node-2");
    assert.deepEqual([silent?.mode, silent?.syncs, silent?.programming.p99Ms], ["", 0, undefined]);
  });
});

describe("proxies in ebpf mode: the maps' sizes", () => {
  test("each map's entries from kubeproxy_sync_proxy_rules_bpf_map_entries, IPv4's first, by the kernel's names", () => {
    const core = new DashboardCore(lab);
    core.proxyScraped({
      node: "node-1",
      at: t0,
      mode: "ebpf",
      rules: { iptablesLegacy: 0, iptablesNft: 0, nftables: 0 },
      error: "",
      metrics: proxyMetrics({
        syncs: 2,
        syncSeconds: 0.01,
        lastSync: t0 / 1000,
        programming: [["+Inf", 0]],
        bpfMaps: [
          ["IPv6", "services", 4],
          ["IPv4", "services", 24],
          ["IPv4", "backends", 9],
          ["IPv4", "reverse_nat", 6],
          ["IPv6", "backends", 2],
        ],
      }),
    });
    core.proxyScraped({
      node: "node-2",
      at: t0,
      mode: "nftables",
      error: "",
      metrics: proxyMetrics({ syncs: 1, syncSeconds: 0.1, lastSync: t0 / 1000, programming: [["+Inf", 0]] }),
    });
    const [one, two] = core.view(objects(), t0).proxies;
    assert.equal(one?.mode, "ebpf");
    assert.deepEqual(
      one?.bpfMaps.map((m) => `${m.name} ${m.entries}`),
      ["lb4_services 24", "lb4_backends 9", "lb4_reverse_nat 6", "lb6_services 4", "lb6_backends 2"],
    );
    assert.deepEqual(two?.bpfMaps, [], "another mode has no maps");
  });
});

describe("DNS pods and the lameduck warning (claim C16)", () => {
  test("queries per second between scrapes, cache hit ratio, states", () => {
    const core = new DashboardCore(lab);
    core.dnsScraped({ pod: "coredns-a", at: t0, metrics: dnsMetrics(100, 80, 20), error: "" });
    core.dnsScraped({ pod: "coredns-a", at: t0 + 2000, metrics: dnsMetrics(150, 120, 60), error: "" });
    const view = core.view(
      objects({ dnsPods: [dnsPod("coredns-a", "node-1"), dnsPod("coredns-b", "node-2", { ready: false })] }),
      t0 + 2000,
    );
    const [a, b] = view.dns.pods;
    assert.deepEqual(
      [a?.name, a?.state, a?.qps, a?.cacheHitRatio, a?.requests],
      ["coredns-a", "serving", 25, 0.5, 150],
    );
    assert.deepEqual([b?.state, b?.qps, b?.cacheHitRatio], ["not ready", undefined, undefined]);
    assert.deepEqual([view.dns.lameduck, view.dns.lameduckMs], ["5s", 5000]);
  });

  test("a deleted pod is in lameduck from the deletion until the window ends, then terminating", () => {
    // Deleted at t0 with a 30 s grace period: deletionTimestamp is t0 + 30 s.
    const pod = dnsPod("coredns-a", "node-1", { deletion: new Date(t0 + 30_000).toISOString(), grace: 30 });
    assert.deepEqual(dnsPodState(pod, 5000, t0 + 1000), { state: "lameduck", endsAt: t0 + 5000 });
    assert.deepEqual(dnsPodState(pod, 5000, t0 + 6000), { state: "terminating" });
    assert.deepEqual(dnsPodState(pod, 0, t0), { state: "terminating" });
    assert.deepEqual(lameduckMsOf(corefile("1m30s")), { text: "1m30s", ms: 90_000 });
    assert.deepEqual(lameduckMsOf(".:53 {\n  health\n}\n"), { text: "", ms: 0 });
  });

  const withP99 = (core: DashboardCore, node: string, programming: [string, number][]) =>
    core.proxyScraped({
      node,
      at: t0,
      mode: "iptables",
      error: "",
      metrics: proxyMetrics({ syncs: 1, syncSeconds: 0.1, lastSync: t0 / 1000, programming }),
    });

  test("warns when the lameduck is shorter than the slowest node's programming p99, names that node", () => {
    const core = new DashboardCore(lab);
    withP99(core, "node-1", [
      ["1", 100],
      ["+Inf", 100],
    ]);
    withP99(core, "node-2", [
      ["4", 50],
      ["8", 100],
      ["+Inf", 100],
    ]);
    const short = core.view(objects({ corefile: corefile("5s") }), t0);
    assert.equal(short.warnings.length, 1);
    assert.equal(short.warnings[0]?.id, "lameduck");
    assert.match(short.warnings[0]?.text ?? "", /lameduck 5s is shorter than .* p99 of 7\.92s \(node-2\)/);
    assert.deepEqual(core.view(objects({ corefile: corefile("30s") }), t0).warnings, []);
    assert.match(
      core.view(objects({ corefile: ".:53 {\n health\n}\n" }), t0).warnings[0]?.text ?? "",
      /no lameduck/,
    );
    assert.deepEqual(
      core.view(objects({ corefile: "" }), t0).warnings,
      [],
      "no Corefile: nothing to compare",
    );
  });

  test("no warning before any proxy has programmed a change", () => {
    const core = new DashboardCore(lab);
    withP99(core, "node-1", [["+Inf", 0]]);
    assert.deepEqual(core.view(objects({ corefile: corefile("0s") }), t0).warnings, []);
  });
});

describe("a migration, from migrate's progress file", () => {
  test("the file follows each step, the view sums failures per switched node", () => {
    const dir = mkdtempSync(join(tmpdir(), "dash-migrate-"));
    let now = t0;
    const file = new MigrationProgressFile(
      migrationProgressPath(dir),
      "nftables",
      ["node-1", "node-2"],
      () => new Date(now),
    );
    file.phase("switching");
    file.node("node-1", { state: "switching", from: "iptables" });
    now += 1500;
    file.node("node-1", {
      state: "switched",
      switchSeconds: 1.2,
      leftovers: 0,
      traffic: {
        "node-1": { tcp: { failures: 1, attempts: 50 }, dns: { failures: 0, attempts: 20 } },
        "node-2": { tcp: { failures: 0, attempts: 52 }, dns: { failures: 2, attempts: 21 } },
      },
    });
    file.node("node-2", { state: "switching", from: "iptables" });
    const progress = readMigrationProgress(dir);
    assert.ok(progress);
    assert.equal(JSON.parse(readFileSync(migrationProgressPath(dir), "utf8")).pid, process.pid);
    const view = migrationView(progress, true);
    assert.deepEqual(
      [view.status, view.phase, view.failures, view.updatedAt - view.startedAt],
      ["running", "switching", 3, 1500],
    );
    assert.deepEqual(view.nodes[0], {
      name: "node-1",
      state: "switched",
      from: "iptables",
      switchSeconds: 1.2,
      leftovers: 0,
      tcp: { failures: 1, attempts: 102 },
      dns: { failures: 2, attempts: 41 },
    });
    assert.deepEqual(view.nodes[1], { name: "node-2", state: "switching", from: "iptables" });
    assert.equal(migrationView(progress, false).status, "interrupted", "its process is gone");
    file.phase("failed", "timed out waiting for node-2's proxy in nftables mode: no sync yet");
    const failed = migrationView(readMigrationProgress(dir) ?? progress, false);
    assert.deepEqual(
      [failed.status, failed.error],
      ["failed", "timed out waiting for node-2's proxy in nftables mode: no sync yet"],
    );
  });

  test("no file, no migration", () => {
    assert.equal(readMigrationProgress(mkdtempSync(join(tmpdir(), "dash-none-"))), undefined);
    const core = new DashboardCore(lab);
    assert.equal(core.view(objects(), t0).migration, undefined);
  });
});

describe("nodes and zones", () => {
  test("each node's zone, readiness and address, in name order", () => {
    const core = new DashboardCore(lab);
    const view = core.view(
      objects({ nodes: [node("node-2", "zone-b", false), node("node-1", "zone-a")] }),
      t0,
    );
    assert.deepEqual(
      view.nodes.map((n) => [n.name, n.zone, n.ready, n.internalIP]),
      [
        ["node-1", "zone-a", true, "198.18.0.11"],
        ["node-2", "zone-b", false, "198.18.0.12"],
      ],
    );
    assert.deepEqual(
      view.proxies.map((p) => p.node),
      ["node-1", "node-2"],
    );
  });
});
