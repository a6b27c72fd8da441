// @switchyard/kube against a real etcd + kube-apiserver from @switchyard/testbed. These tests live in the
// root test workspace because the testbed depends on kube, so kube cannot depend on the testbed. Skips, saying
// why, when the upstream binaries are missing.
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import {
  configMaps,
  events,
  HttpRestClient,
  Informer,
  isAlreadyExists,
  isConflict,
  isNotFound,
  isResourceExpired,
  Logger,
  listAll,
  loadKubeConfig,
  namespaces,
  type RestClient,
} from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/testbed";
import type { ConfigMap, Event } from "kubernetes-types/core/v1.js";
import { BlackholeProxy } from "./fixtures/blackhole-proxy.js";

const skip = missingControlPlane();

describe("against a real kube-apiserver", { skip }, () => {
  let cp: TestControlPlane;
  let client: HttpRestClient;
  const ns = "kube-integration";

  before(async () => {
    cp = await startControlPlane();
    client = new HttpRestClient(loadKubeConfig({ kubeconfig: cp.kubeconfigPath }));
    await client.create(namespaces, { metadata: { name: ns } });
  });
  after(async () => {
    client?.close();
    await cp?.stop();
  });

  test("REST client: create, get, conflict, patch, list, delete", async () => {
    const created = await client.create(configMaps, {
      metadata: { name: "cm", namespace: ns },
      data: { a: "1" },
    });
    assert.ok(created.metadata?.uid);
    await assert.rejects(
      client.create(configMaps, { metadata: { name: "cm", namespace: ns } }),
      isAlreadyExists,
    );
    const got = await client.get(configMaps, "cm", { namespace: ns });
    assert.equal(got.data?.a, "1");
    await client.update(configMaps, { ...got, data: { a: "2" } });
    await assert.rejects(client.update(configMaps, { ...got, data: { a: "3" } }), isConflict);
    const patched = await client.patch(configMaps, "cm", "merge", { data: { b: "x" } }, { namespace: ns });
    assert.deepEqual(patched.data, { a: "2", b: "x" });
    const list = await client.list(configMaps, { namespace: ns, fieldSelector: "metadata.name=cm" });
    assert.equal(list.items.length, 1);
    await client.delete(configMaps, "cm", { namespace: ns });
    await assert.rejects(client.get(configMaps, "cm", { namespace: ns }), isNotFound);
  });

  test("an informer keeps delivering after kube-apiserver is killed and restarted", async () => {
    const informer = new Informer<ConfigMap>({
      client,
      resource: configMaps,
      namespace: ns,
      stallTimeoutMs: 20_000,
    });
    informer.start();
    try {
      assert.equal(await informer.waitForSync(AbortSignal.timeout(30_000)), true);
      await cp.killApiserver();
      await cp.startApiserver();
      await client.create(configMaps, { metadata: { name: "after-restart", namespace: ns } });
      await eventually("the event after the restart", () => informer.get(ns, "after-restart") !== undefined);
    } finally {
      await informer.stop();
    }
  });

  test("a watch from a compacted resourceVersion relists and ends with the right cache", async () => {
    for (const name of ["keep", "drop"])
      await client.create(configMaps, { metadata: { name, namespace: ns } });
    const informer = new Informer<ConfigMap>({ client, resource: configMaps, namespace: ns });
    const deleted: string[] = [];
    informer.addEventHandler({ onDelete: (cm) => deleted.push(cm.metadata?.name ?? "") });
    informer.start();
    try {
      assert.equal(await informer.waitForSync(AbortSignal.timeout(30_000)), true);
      // Change things while the apiserver is down, compact, and come back: the old resourceVersion is gone.
      await cp.killApiserver();
      await cp.startApiserver();
      await client.delete(configMaps, "drop", { namespace: ns });
      await client.create(configMaps, { metadata: { name: "new", namespace: ns } });
      await cp.compactEtcd();
      await eventually(
        "relist",
        () => informer.get(ns, "new") !== undefined && informer.get(ns, "drop") === undefined,
      );
      assert.ok(deleted.includes("drop"));
      assert.ok(informer.get(ns, "keep"));
    } finally {
      await informer.stop();
    }
  });

  test("listAll: a continue token that etcd compacted away turns into one full list (client-go's pager)", async () => {
    // Events are the kind kube-apiserver keeps no watch cache for, so their pages come from etcd, where a
    // compaction expires the token; a cached kind's pages come from the cache's snapshots for a while.
    const event = (name: string): Event => ({
      metadata: { name, namespace: ns },
      involvedObject: { kind: "ConfigMap", name: "x", namespace: ns },
      reason: "Paging",
      message: name,
      type: "Normal",
    });
    for (let i = 0; i < 5; i++) await client.create(events, event(`page-${i}`));
    const asked: string[] = [];
    let expired = 0;
    // Between the first page and the next, another write and a compaction past the first page's revision.
    const paging = {
      list: async (res, opts = {}) => {
        asked.push(opts.continue ? "continue" : opts.limit ? "first page" : "full list");
        try {
          const page = await client.list(res, opts);
          if (asked.length === 1) {
            await client.create(events, event("page-late"));
            await cp.compactEtcd();
          }
          return page;
        } catch (err) {
          if (isResourceExpired(err)) expired++;
          throw err;
        }
      },
    } as Pick<RestClient, "list"> as RestClient;
    const list = await listAll(paging, events, { namespace: ns, limit: 2 });
    assert.deepEqual(asked, ["first page", "continue", "full list"]);
    assert.equal(expired, 1, "the apiserver answered the continue token with 410 Expired");
    const names = list.items.map((e) => e.metadata?.name ?? "").filter((n) => n.startsWith("page-"));
    assert.deepEqual(names.sort(), ["page-0", "page-1", "page-2", "page-3", "page-4", "page-late"]);
  });

  test("an informer cut off from the apiserver fails each call at its limit and catches up once it is back", async () => {
    const proxy = await BlackholeProxy.start(cp.server);
    const dir = mkdtempSync(join(tmpdir(), "sy-informer-blackhole-"));
    const viaProxy = join(dir, "kubeconfig");
    writeFileSync(viaProxy, readFileSync(cp.kubeconfigPath, "utf8").replaceAll(cp.server, proxy.url));
    const cutClient = new HttpRestClient(loadKubeConfig({ kubeconfig: viaProxy }), {
      requestTimeoutMs: 1000,
    });
    const logged: string[] = [];
    const informer = new Informer<ConfigMap>({
      client: cutClient,
      resource: configMaps,
      namespace: ns,
      stallTimeoutMs: 2000,
      backoff: { initialMs: 100, maxMs: 400 },
      logger: new Logger({ out: { write: (line: string) => logged.push(line) } }),
    });
    informer.start();
    try {
      assert.equal(await informer.waitForSync(AbortSignal.timeout(30_000)), true);
      proxy.blackhole();
      await client.create(configMaps, { metadata: { name: "while-cut-off", namespace: ns } });
      // The silent watch is given up by the stall guard, and the new one gets no answer within its limit.
      await eventually(
        "a watch that got no answer within the request timeout",
        () => logged.some((l) => l.includes("watch configmaps: no response within 1000 ms")),
        { timeoutMs: 20_000, describe: () => logged.join("") },
      );
      assert.equal(informer.get(ns, "while-cut-off"), undefined);
      proxy.restore();
      await eventually(
        "the change made while cut off",
        () => informer.get(ns, "while-cut-off") !== undefined,
        {
          timeoutMs: 20_000,
        },
      );
    } finally {
      await informer.stop();
      cutClient.close();
      await proxy.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
