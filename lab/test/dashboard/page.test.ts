// The page in a real browser against a view made by the real core from objects in memory: what it shows, that it
// follows the server's events, and that it loads nothing from outside the dashboard's server.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import type { Page } from "playwright-core";
import { DashboardCore, type LabObjects } from "../../src/dashboard/dashboard-core.js";
import { LiveView } from "../../src/dashboard/live-view.js";
import { type DashboardServer, serveDashboard } from "../../src/dashboard/server.js";
import { countEndpoints } from "../../src/dashboard/services-view.js";
import type { MigrationProgress } from "../../src/migrate/progress-file.js";
import { repoRoot } from "../../src/self.js";
import { browserSkip, openBrowser, rendered } from "./browser.js";
import { corefile, dnsMetrics, dnsPod, type Ep, node, proxyMetrics, service, slice } from "./fixtures.js";

const pageDir = join(repoRoot, "lab", "dist", "dashboard", "page");
const skip =
  browserSkip() ??
  (existsSync(join(pageDir, "main.js"))
    ? undefined
    : "the page is not built (npm run build -w @switchyard/lab)");

const zoned = (ip: string, n: string, zone: string, hinted = true): Ep => ({
  ip,
  node: n,
  zone,
  ...(hinted ? { hintZones: [zone] } : {}),
});

describe("the dashboard page in Chromium", { skip }, () => {
  let server: DashboardServer;
  let close: () => Promise<void>;
  let page: Page;
  const outside: string[] = [];
  const errors: string[] = [];
  const t0 = Date.now() - 60_000;
  const core = new DashboardCore({ runtime: "netns", name: "sypage" });
  const webSlices = (eps: Ep[]) => [slice("shop", "web", "web-abc", eps)];
  let objects: LabObjects;
  const live = new LiveView(() => core.view(objects, Date.now()), 0);

  before(async () => {
    const two = [zoned("10.244.1.4", "node-1", "zone-a"), zoned("10.244.2.4", "node-2", "zone-b")];
    const three = [...two, zoned("10.244.1.5", "node-1", "zone-a", false)];
    // Hints dropped while a third pod was not hinted yet, and came back.
    core.recordEndpoints("shop/web", countEndpoints(webSlices(two)), t0);
    core.recordEndpoints("shop/web", countEndpoints(webSlices(three)), t0 + 10_000);
    core.recordEndpoints("shop/web", countEndpoints(webSlices(two)), t0 + 20_000);
    for (const [i, at] of [t0, t0 + 30_000].entries())
      core.proxyScraped({
        node: "node-1",
        at,
        mode: "iptables",
        error: "",
        rules: { iptablesLegacy: 0, iptablesNft: 85, nftables: 0 },
        metrics: proxyMetrics({
          syncs: 5 + i * 4,
          syncSeconds: 0.1 + i * 0.2,
          lastSync: at / 1000,
          programming: [
            ["4", 1],
            ["8", 10],
            ["+Inf", 10],
          ],
        }),
      });
    core.proxyScraped({
      node: "node-2",
      at: t0,
      mode: "ebpf",
      error: "",
      rules: { iptablesLegacy: 0, iptablesNft: 0, nftables: 0 },
      metrics: proxyMetrics({
        syncs: 3,
        syncSeconds: 0.03,
        lastSync: t0 / 1000,
        programming: [["+Inf", 0]],
        bpfMaps: [
          ["IPv4", "services", 24],
          ["IPv4", "backends", 9],
          ["IPv4", "reverse_nat", 6],
        ],
      }),
    });
    core.dnsScraped({ pod: "coredns-1", at: t0, metrics: dnsMetrics(10, 8, 4), error: "" });
    core.dnsScraped({ pod: "coredns-1", at: t0 + 2000, metrics: dnsMetrics(30, 20, 10), error: "" });
    const migration: MigrationProgress = {
      to: "nftables",
      pid: process.pid,
      startedAt: new Date(t0).toISOString(),
      updatedAt: new Date().toISOString(),
      phase: "switching",
      nodes: [
        {
          name: "node-1",
          state: "switched",
          from: "iptables",
          switchSeconds: 0.9,
          leftovers: 0,
          traffic: { "node-2": { tcp: { failures: 0, attempts: 152 }, dns: { failures: 1, attempts: 76 } } },
        },
        { name: "node-2", state: "switching", from: "iptables" },
      ],
    };
    objects = {
      nodes: [node("node-1", "zone-a"), node("node-2", "zone-b")],
      services: [
        service("shop", "web", { trafficDistribution: "PreferSameZone" }),
        service("default", "kubernetes"),
      ],
      slices: webSlices(two),
      dnsPods: [dnsPod("coredns-1", "node-1")],
      corefile: corefile("5s"),
      migration: { progress: migration, alive: true },
      notSynced: [],
    };
    live.publish();
    server = await serveDashboard({
      host: "127.0.0.1",
      port: 0,
      title: "page test",
      pageDir,
      current: () => live.current(),
      subscribe: (l) => live.subscribe(l),
    });
    const browser = await openBrowser();
    close = browser.close;
    page = await browser.context.newPage();
    page.on("request", (r) => {
      if (!r.url().startsWith(server.url)) outside.push(r.url());
    });
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    await page.goto(server.url);
  });
  after(async () => {
    await close?.();
    await server?.close();
  });

  test("shows the Services, their endpoints and when the hints dropped and came back", async () => {
    const web = page.locator('[data-service="shop/web"]');
    await web.waitFor();
    assert.equal(await web.getAttribute("data-ready"), "2");
    assert.equal(await web.getAttribute("data-hints"), "all");
    await web.locator("summary").click();
    const changes = await web.locator(".changes li").allTextContents();
    assert.equal(changes.length, 2);
    assert.match(changes[0] ?? "", /hints back: 2 of 2 ready endpoints hinted/);
    assert.match(
      changes[1] ?? "",
      /hints dropped: 2 of 3 ready endpoints hinted \(hints on some: proxies ignore them\)/,
    );
    assert.match(
      await rendered(web.locator('[data-endpoint="10.244.2.4"]')),
      /node-2\s+zone-b\s+ready\s+zones zone-b/,
    );
    assert.equal(
      await web.locator('[data-testid="timeline-shop/web"] canvas').count(),
      1,
      "uPlot drew the timeline",
    );
    assert.ok(await page.locator('[data-service="default/kubernetes"]').isVisible());
  });

  test("nodes and zones, the proxy's mode, rules (ebpf: map sizes) and programming latency; DNS; the migration; the C16 warning", async () => {
    const n1 = await rendered(page.locator('[data-node="node-1"]'));
    assert.match(n1, /zone-a/);
    assert.match(n1, /iptables/);
    assert.match(n1, /0 \/ 85 \/ 0/);
    assert.match(n1, /5\.78s \/ 7\.96s \(10\)/, "p50 and p99 of the programming histogram");
    assert.equal(
      await page.locator('[data-testid="bpf-maps-node-1"]').count(),
      0,
      "iptables mode has no maps",
    );
    assert.match(await rendered(page.locator('[data-node="node-2"] .proxy-mode')), /^ebpf$/);
    assert.deepEqual(
      (await page.locator('[data-testid="bpf-maps-node-2"] > div').allInnerTexts()).map((t) => t.trim()),
      ["lb4_services 24", "lb4_backends 9", "lb4_reverse_nat 6"],
    );
    assert.match(await rendered(page.locator('[data-dns-pod="coredns-1"]')), /serving\s+10\.0\s+50\.0%/);
    assert.equal(await rendered(page.locator('[data-testid="migration-status"]')), "running");
    assert.match(
      await rendered(page.locator('[data-migration-node="node-1"]')),
      /switched\s+iptables\s+0\.9s\s+0\s+0\/152\s+1\/76/,
    );
    assert.match(
      await rendered(page.locator('[data-warning="lameduck"]')),
      /lameduck 5s is shorter than .* \(node-1\)/,
    );
  });

  test("follows the server: a new endpoint shows up without a reload", async () => {
    objects = {
      ...objects,
      slices: webSlices([
        zoned("10.244.1.4", "node-1", "zone-a"),
        zoned("10.244.2.4", "node-2", "zone-b"),
        zoned("10.244.2.9", "node-2", "zone-b"),
      ]),
    };
    live.changed();
    await page.waitForSelector('[data-service="shop/web"][data-ready="3"]');
    assert.equal(await rendered(page.locator('[data-testid="connection"]')), "live");
  });

  test("loads nothing from outside its server and logs no error", () => {
    assert.deepEqual(outside, []);
    assert.deepEqual(errors, []);
  });
});
