// The dashboard's first view: a page opened as soon as the URL is printed shows what is already known of the lab,
// each node's proxy mode and the syncs it made before the dashboard started, not "-" and "no syncs seen yet".
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { nodes } from "@switchyard/kube";
import { FakeApi } from "@switchyard/kube/testing";
import { startDashboard } from "../../src/dashboard/dashboard.js";
import type { DashboardLab } from "../../src/dashboard/lab-access.js";
import type { DashboardView } from "../../src/dashboard/view-model.js";
import type { Exec } from "../../src/exec.js";
import { node, proxyMetrics } from "./fixtures.js";

test("the first view has each node's proxy mode and the syncs it made before the dashboard started", async () => {
  const api = new FakeApi();
  await api.seed(nodes, node("node-1", "zone-a"));
  await api.seed(nodes, node("node-2", "zone-b"));
  // Each node's proxy, read from inside the node: it synced 12 times (0.6 s in all) before the dashboard started.
  const exec: Exec = async (argv) => {
    const url = argv.at(-1) ?? "";
    if (url.endsWith("/proxyMode")) return "nftables\n";
    if (url.endsWith("/metrics"))
      return proxyMetrics({
        syncs: 12,
        syncSeconds: 0.6,
        lastSync: 1_700_000_000,
        programming: [["+Inf", 0]],
      });
    return "";
  };
  const lab: DashboardLab = {
    lab: { runtime: "netns", name: "first-view" },
    // Unused: the dashboard is given its client.
    access: undefined as unknown as DashboardLab["access"],
    nodeShell: (name) => ["ip", "netns", "exec", name],
  };
  const dashboard = await startDashboard({
    stateDir: mkdtempSync(join(tmpdir(), "dash-first-view-")),
    port: 0,
    lab,
    client: api,
    exec,
    // No second round during the test: what the view has came from the first.
    scrapeIntervalMs: 60_000,
  });
  try {
    const view = (await (await fetch(`${dashboard.url}api/view`)).json()) as DashboardView;
    assert.deepEqual(view.notSynced, []);
    assert.deepEqual(
      view.proxies.map((p) => [
        p.node,
        p.mode,
        p.syncs,
        p.syncHistory.map((s) => [Math.round(s.meanMs), s.syncs]),
      ]),
      [
        ["node-1", "nftables", 12, [[50, 12]]],
        ["node-2", "nftables", 12, [[50, 12]]],
      ],
    );
    assert.equal(view.proxies[0]?.lastSyncAt, 1_700_000_000_000);
  } finally {
    await dashboard.stop();
  }
});
