import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import { byNodeName, byServiceName, indexNames } from "../../src/informer/indexers.js";
import { Informer } from "../../src/informer/informer.js";
import { endpointSlices, pods } from "../../src/rest/resources.js";
import { FakeApi } from "../../src/testing/fake-api.js";
import { FakeClock, flushAsync } from "../../src/testing/fake-clock.js";
import { makePod, makeSlice, recordEvents } from "../helpers.js";

const stopAll: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stopAll.splice(0)) await stop();
});

function podInformer(api: FakeApi, clock: FakeClock, extra: { stallTimeoutMs?: number } = {}) {
  const informer = new Informer<Pod>({
    client: api,
    resource: pods,
    clock,
    random: () => 0,
    indexers: { [indexNames.nodeName]: byNodeName },
    ...extra,
  });
  const events = recordEvents();
  informer.addEventHandler(events.handler);
  stopAll.push(() => informer.stop());
  return { informer, seen: events.seen };
}

describe("Informer", () => {
  test("lists, syncs, then follows watch events", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    await api.seed(pods, makePod("ns1", "a", { nodeName: "n1" }));
    await api.seed(pods, makePod("ns2", "b", { nodeName: "n2" }));
    const { informer, seen } = podInformer(api, clock);
    assert.equal(informer.hasSynced(), false);
    informer.start();
    assert.equal(await informer.waitForSync(), true);
    assert.deepEqual(seen.sort(), ["add ns1/a", "add ns2/b"]);
    assert.equal(informer.lastSyncResourceVersion(), api.resourceVersion);

    seen.length = 0;
    await api.create(pods, makePod("ns1", "c", { nodeName: "n1" }));
    const b = api.peek(pods, "ns2", "b");
    assert.ok(b);
    await api.update(pods, { ...b, metadata: { ...b.metadata, labels: { app: "b2" } } });
    await api.delete(pods, "a", { namespace: "ns1" });
    await flushAsync();
    assert.deepEqual(seen, ["add ns1/c", "update ns2/b", "delete ns1/a"]);
    assert.equal(informer.get("ns2", "b")?.metadata?.labels?.app, "b2");
    assert.deepEqual(
      informer.list("ns1").map((p) => p.metadata?.name),
      ["c"],
    );
    assert.deepEqual(
      informer.byIndex(indexNames.nodeName, "n1").map((p) => p.metadata?.name),
      ["c"],
    );
    assert.equal(informer.lastSyncResourceVersion(), api.resourceVersion);
  });

  test("asks for bookmarks and a randomised server-side timeout of 5-10 minutes", async () => {
    const api = new FakeApi();
    const informer = new Informer<Pod>({
      client: api,
      resource: pods,
      clock: new FakeClock(),
      random: () => 0.5,
    });
    stopAll.push(() => informer.stop());
    informer.start();
    await informer.waitForSync();
    await flushAsync();
    const [request] = api.watchRequests;
    assert.equal(request?.allowWatchBookmarks, true);
    assert.equal(request?.timeoutSeconds, 450);
    assert.equal(request?.resourceVersion, api.resourceVersion);
  });

  test("hands out deep-frozen objects that handlers cannot change", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    await api.seed(pods, makePod("ns1", "a"));
    const informer = new Informer<Pod>({ client: api, resource: pods, clock });
    stopAll.push(() => informer.stop());
    const errors: unknown[] = [];
    informer.addEventHandler({
      onAdd: (pod) => {
        try {
          (pod.metadata as { name?: string }).name = "changed";
        } catch (err) {
          errors.push(err);
        }
      },
    });
    informer.start();
    await informer.waitForSync();
    assert.equal(errors.length, 1);
    assert.ok(errors[0] instanceof TypeError);
    const cached = informer.get("ns1", "a");
    assert.equal(cached?.metadata?.name, "a");
    assert.ok(Object.isFrozen(cached?.spec?.containers?.[0]));
  });

  test("indexes EndpointSlices by their Service", async () => {
    const api = new FakeApi();
    await api.seed(endpointSlices, makeSlice("ns1", "web-abc", "web"));
    await api.seed(endpointSlices, makeSlice("ns1", "web-def", "web"));
    await api.seed(endpointSlices, makeSlice("ns2", "web-xyz", "web"));
    const informer = new Informer({
      client: api,
      resource: endpointSlices,
      clock: new FakeClock(),
      indexers: { [indexNames.serviceName]: byServiceName },
    });
    stopAll.push(() => informer.stop());
    informer.start();
    await informer.waitForSync();
    const names = informer.byIndex(indexNames.serviceName, "ns1/web").map((s) => s.metadata?.name);
    assert.deepEqual(names.sort(), ["web-abc", "web-def"]);
  });

  test("late handlers receive the cached objects as adds", async () => {
    const api = new FakeApi();
    await api.seed(pods, makePod("ns1", "a"));
    const { informer } = podInformer(api, new FakeClock());
    informer.start();
    await informer.waitForSync();
    const late = recordEvents();
    informer.addEventHandler(late.handler);
    assert.deepEqual(late.seen, ["add ns1/a"]);
  });

  test("waitForSync resolves false when its signal aborts first", async () => {
    const api = new FakeApi();
    api.failNext("list", 500);
    const { informer } = podInformer(api, new FakeClock());
    informer.start();
    const abort = new AbortController();
    const waiting = informer.waitForSync(abort.signal);
    abort.abort();
    assert.equal(await waiting, false);
  });
});

describe("Informer transform", () => {
  test("listed and watched objects are stored as the transform returns them", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const withManagedFields = (p: Pod): Pod => ({
      ...p,
      metadata: { ...p.metadata, managedFields: [{ manager: "kubectl", operation: "Update" }] },
    });
    await api.seed(pods, withManagedFields(makePod("ns1", "a", { nodeName: "n1" })));
    const informer = new Informer<Pod>({
      client: api,
      resource: pods,
      clock,
      random: () => 0,
      indexers: { [indexNames.nodeName]: byNodeName },
      transform: (p) => ({ ...p, metadata: { ...p.metadata, managedFields: undefined } }),
    });
    stopAll.push(() => informer.stop());
    informer.start();
    assert.equal(await informer.waitForSync(), true);
    assert.equal(informer.get("ns1", "a")?.metadata?.managedFields, undefined);
    await api.seed(pods, withManagedFields(makePod("ns1", "b", { nodeName: "n1" })));
    await flushAsync();
    const b = informer.get("ns1", "b");
    assert.ok(b, "watched pod arrived");
    assert.equal(b.metadata?.managedFields, undefined);
    assert.equal(informer.byIndex(indexNames.nodeName, "n1").length, 2);
  });
});
