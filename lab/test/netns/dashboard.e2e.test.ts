// The dashboard on a real netns lab with our stack, in Chromium: it shows the lab's Services, nodes, proxies and
// DNS pods, follows a scale-up without a reload, warns when the DNS lameduck is shorter than the measured
// propagation p99, and follows a `migrate` node by node. Screenshots go to the test's temporary folder, or to the
// folder SWITCHYARD_SCREENSHOTS_DIR names: `npm run screenshots` gives docs/images, which is how the committed
// docs/images/dashboard-*.png are made. A test run never writes into the checkout.
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  configMaps,
  defineResource,
  HttpRestClient,
  loadKubeConfig,
  namespaces,
  services,
} from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import type { Deployment } from "kubernetes-types/apps/v1.js";
import type { ServiceAccount } from "kubernetes-types/core/v1.js";
import type { BrowserContext, Page } from "playwright-core";
import { type RunningDashboard, startDashboard } from "../../src/dashboard/dashboard.js";
import { migrate } from "../../src/migrate/migrate.js";
import { labDown } from "../../src/netns/lab-down.js";
import type { LabState } from "../../src/netns/state.js";
import { withLameduck } from "../../src/scenarios/kit/corefile.js";
import { repoRoot } from "../../src/self.js";
import { browserSkip, openBrowser, rendered } from "../dashboard/browser.js";
import { stackLabSkip, upTestLab } from "./test-lab.js";

// Its own prefix and networks, so other labs on this host are left alone.
const lab = { prefix: "syd", nodes: 2, zones: 2, nodeCidr: "198.18.28.0/24", clusterCidr: "10.254.0.0/16" };
const pageBuilt = existsSync(join(repoRoot, "lab", "dist", "dashboard", "page", "main.js"));
const skip =
  stackLabSkip() ??
  browserSkip() ??
  (pageBuilt ? undefined : "the page is not built (npm run build -w @switchyard/lab)");

const deployments = defineResource<Deployment>({
  group: "apps",
  version: "v1",
  resource: "deployments",
  kind: "Deployment",
  namespaced: true,
});
const serviceAccounts = defineResource<ServiceAccount>({
  group: "",
  version: "v1",
  resource: "serviceaccounts",
  kind: "ServiceAccount",
  namespaced: true,
});
/** Where screenshots go when asked (`npm run screenshots`: docs/images); unset, the test's temporary folder. */
const screenshotsDir = process.env.SWITCHYARD_SCREENSHOTS_DIR;
const ns = "dash-e2e";

describe("switchyard-lab dashboard on a netns lab, in Chromium", { skip }, () => {
  let dir: string;
  let state: LabState;
  let client: HttpRestClient;
  let dashboard: RunningDashboard;
  let page: Page;
  let context: BrowserContext;
  let closeBrowser: () => Promise<void>;

  /** A screenshot of the page (or one element of it), kept small: into the test's folder unless asked elsewhere. */
  const shoot = async (name: string, selector?: string) => {
    const path = join(screenshotsDir ?? dir, `dashboard-${name}.png`);
    if (selector) await page.locator(selector).screenshot({ path });
    else await page.screenshot({ path, fullPage: true });
    console.log(`# ${path}: ${Math.round(statSync(path).size / 1024)} KiB`);
  };
  const scale = (replicas: number) =>
    client.patch(deployments, "web", "merge", { spec: { replicas } }, { namespace: ns });

  before(async () => {
    dir = mkdtempSync(join(tmpdir(), "switchyard-dashboard-"));
    state = await upTestLab(dir, lab, { stack: "iptables" });
    console.log(`# lab up in ${state.upSeconds?.toFixed(1)}s`);
    client = new HttpRestClient(loadKubeConfig({ kubeconfig: state.kubeconfig }));
    await client.create(namespaces, { metadata: { name: ns } });
    await eventually("the namespace's default ServiceAccount", () =>
      client.get(serviceAccounts, "default", { namespace: ns }),
    );
    await client.create(
      deployments,
      {
        metadata: { name: "web" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: {
              containers: [
                {
                  name: "echo",
                  image: "switchyard/echo:0.1.0",
                  readinessProbe: { httpGet: { path: "/healthz", port: 8080 }, periodSeconds: 1 },
                },
              ],
            },
          },
        },
      },
      { namespace: ns },
    );
    // PreferSameZone: the slice controller hints every endpoint with its zone.
    await client.create(
      services,
      {
        metadata: { name: "web" },
        spec: {
          selector: { app: "web" },
          ports: [{ name: "http", port: 80, targetPort: 8080 }],
          trafficDistribution: "PreferSameZone",
        },
      },
      { namespace: ns },
    );
    dashboard = await startDashboard({ stateDir: dir, port: 0, scrapeIntervalMs: 1000 });
    console.log(`# dashboard at ${dashboard.url}`);
    const browser = await openBrowser();
    closeBrowser = browser.close;
    context = browser.context;
    page = await context.newPage();
    await page.goto(dashboard.url);
  });

  after(async () => {
    await closeBrowser?.();
    await dashboard?.stop();
    client?.close();
    if (dir && existsSync(dir)) await labDown(dir);
  });

  test("shows the lab's Services with their endpoints and hints, nodes, proxies and DNS pods", async () => {
    for (const svc of ["default/kubernetes", "kube-system/kube-dns"])
      await page.locator(`[data-service="${svc}"]`).waitFor({ timeout: 60_000 });
    const web = page.locator(`[data-service="${ns}/web"][data-ready="2"]`);
    await web.waitFor({ timeout: 120_000 });
    await page.locator(`[data-service="${ns}/web"][data-hints="all"]`).waitFor({ timeout: 60_000 });
    await web.locator("summary").click();
    const endpoints = await web.locator("[data-endpoint]").allInnerTexts();
    assert.equal(endpoints.length, 2);
    for (const e of endpoints) assert.match(e, /node-\d\s+zone-[ab]\s+ready\s+zones zone-[ab]/);
    for (const node of ["node-1", "node-2"]) {
      const row = page.locator(`[data-node="${node}"]`);
      await row.locator(".proxy-mode", { hasText: "iptables" }).waitFor({ timeout: 60_000 });
      assert.match(await rendered(row), /zone-[ab]\s+Ready/);
    }
    const dnsPods = page.locator("[data-dns-pod]");
    await dnsPods.first().waitFor({ timeout: 60_000 });
    for (const text of await dnsPods.allInnerTexts()) assert.match(text, /serving/);
    assert.equal(await rendered(page.locator('[data-testid="lameduck"]')), "5s");
  });

  test("a dashboard started once the proxies have synced shows their mode and syncs in its first view", async () => {
    // No second scrape round: what the page shows came with the first view.
    const second = await startDashboard({ stateDir: dir, port: 0, scrapeIntervalMs: 600_000 });
    const fresh = await context.newPage();
    try {
      await fresh.goto(second.url);
      for (const node of ["node-1", "node-2"]) {
        const row = fresh.locator(`[data-node="${node}"]`);
        await row.waitFor({ timeout: 10_000 });
        assert.equal(await rendered(row.locator(".proxy-mode")), "iptables");
        await fresh.locator(`[data-testid="sync-${node}"]`).waitFor({ timeout: 10_000 });
      }
    } finally {
      await fresh.close();
      await second.stop();
    }
  });

  test("follows a scale-up without a reload: the counts and the Service's timeline", async () => {
    await scale(3);
    const web = page.locator(`[data-service="${ns}/web"][data-ready="3"]`);
    await web.waitFor({ timeout: 120_000 });
    await page
      .locator(`[data-service="${ns}/web"][data-ready="3"][data-hints="all"]`)
      .waitFor({ timeout: 60_000 });
    assert.equal(await web.locator("[data-endpoint]").count(), 3);
    assert.equal(await rendered(page.locator('[data-testid="connection"]')), "live");
    await shoot("service", `[data-service="${ns}/web"]`);
  });

  test("warns when the DNS lameduck is shorter than the proxies' network programming p99 (C16)", async () => {
    // The scale-up above was programmed into every node: each proxy has a p99 now.
    for (const node of ["node-1", "node-2"])
      await page.locator(`[data-node="${node}"]:not([data-programmed="0"])`).waitFor({ timeout: 60_000 });
    const cm = await client.get(configMaps, "coredns", { namespace: "kube-system" });
    const corefile = cm.data?.Corefile ?? "";
    const patch = (text: string) =>
      client.patch(
        configMaps,
        "coredns",
        "merge",
        { data: { Corefile: text } },
        { namespace: "kube-system" },
      );
    assert.equal(await page.locator("[data-warning]").count(), 0, "5s is longer than this lab's p99");
    await patch(withLameduck(corefile, "0s"));
    try {
      const warning = page.locator('[data-warning="lameduck"]');
      await warning.waitFor({ timeout: 30_000 });
      assert.match(
        await rendered(warning),
        /lameduck 0s is shorter than the proxies' network programming p99 of/,
      );
    } finally {
      await patch(corefile);
    }
    await page.locator('[data-warning="lameduck"]').waitFor({ state: "detached", timeout: 30_000 });
  });

  test("follows a migration node by node, and the node's proxy mode with it", async () => {
    const report = await migrate({
      stateDir: dir,
      to: "nftables",
      nodes: ["node-1"],
      out: { write: () => {} },
    });
    assert.equal(report.switches[0]?.leftovers, 0);
    await page.locator('[data-testid="migration-status"]', { hasText: "done" }).waitFor({ timeout: 30_000 });
    assert.match(
      await rendered(page.locator('[data-migration-node="node-1"]')),
      /switched\s+iptables\s+\d+\.\ds\s+0\s+\d+\/\d+\s+\d+\/\d+/,
    );
    await page
      .locator('[data-node="node-1"] .proxy-mode', { hasText: "nftables" })
      .waitFor({ timeout: 60_000 });
    assert.match(await rendered(page.locator('[data-node="node-2"] .proxy-mode')), /iptables/);
    await shoot("migration", "#migration");
    // The whole page last, with the scale-up in the timeline, sync durations from several reads, the migration.
    await shoot("overview");
  });
});
