// @switchyard/kube against a real etcd + kube-apiserver from @switchyard/lab/testing. These tests live in the
// root test workspace because the lab depends on kube, so kube cannot depend on the lab. Skips, saying why,
// when the upstream binaries are missing.
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  configMaps,
  HttpRestClient,
  Informer,
  isAlreadyExists,
  isConflict,
  isNotFound,
  loadKubeConfig,
  namespaces,
} from "@switchyard/kube";
import { eventually } from "@switchyard/kube/testing";
import { missingControlPlane, startControlPlane, type TestControlPlane } from "@switchyard/lab/testing";
import type { ConfigMap } from "kubernetes-types/core/v1.js";

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
});
