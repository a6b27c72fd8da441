// One object that a transform, an indexer or a handler cannot take must not stop an informer: that object
// is skipped (logged once with its key), everything else keeps syncing and serving.
import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { Informer } from "../../src/informer/informer.js";
import { Logger } from "../../src/log/logger.js";
import { endpointSlices } from "../../src/rest/resources.js";
import { FakeApi } from "../../src/testing/fake-api.js";
import { FakeClock, flushAsync } from "../../src/testing/fake-clock.js";
import { makeSlice } from "../helpers.js";

const stopAll: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stopAll.splice(0)) await stop();
});

function capturedLogger() {
  const lines: Record<string, unknown>[] = [];
  const logger = new Logger({ out: { write: (l: string) => lines.push(JSON.parse(l)) } });
  return { logger, lines };
}

function poisoned(slice: EndpointSlice): boolean {
  return slice.metadata?.labels?.poison === "yes";
}

function sliceInformer(
  api: FakeApi,
  extra: Partial<ConstructorParameters<typeof Informer<EndpointSlice>>[0]>,
) {
  const { logger, lines } = capturedLogger();
  const informer = new Informer<EndpointSlice>({
    client: api,
    resource: endpointSlices,
    clock: new FakeClock(),
    random: () => 0,
    logger,
    ...extra,
  });
  stopAll.push(() => informer.stop());
  return { informer, lines };
}

async function seedTwo(api: FakeApi): Promise<void> {
  await api.seed(endpointSlices, makeSlice("ns", "good", "web"));
  const bad = makeSlice("ns", "bad", "web");
  bad.metadata = { ...bad.metadata, labels: { ...bad.metadata?.labels, poison: "yes" } };
  await api.seed(endpointSlices, bad);
}

const skipped = (lines: Record<string, unknown>[]) =>
  lines.filter((l) => l.msg === "skipping an object that failed").map((l) => `${l.stage} ${l.object}`);

describe("Informer isolation", () => {
  test("a transform that throws on one object: the rest syncs, the object is logged once", async () => {
    const api = new FakeApi();
    await seedTwo(api);
    const { informer, lines } = sliceInformer(api, {
      transform: (s) => {
        if (poisoned(s)) throw new Error("cannot slim this one");
        return s;
      },
    });
    informer.start();
    assert.equal(await informer.waitForSync(), true);
    assert.deepEqual(informer.keys(), ["ns/good"]);
    // A relist must not log the same failure again; a watch event for a new object still arrives.
    api.compact();
    api.closeWatches();
    await api.seed(endpointSlices, makeSlice("ns", "later", "web"));
    for (let i = 0; i < 50 && !informer.get("ns", "later"); i++) await flushAsync();
    assert.ok(informer.get("ns", "later"));
    assert.deepEqual(skipped(lines), ["transform ns/bad"]);
    assert.match(String(lines.find((l) => l.stage === "transform")?.error), /cannot slim this one/);
  });

  test("an indexer that throws on one object leaves the store and its indexes consistent", async () => {
    const api = new FakeApi();
    await seedTwo(api);
    const { informer, lines } = sliceInformer(api, {
      indexers: {
        service: (s) => {
          if (poisoned(s)) throw new TypeError("Cannot read properties of null (reading 'map')");
          return [s.metadata?.labels?.["kubernetes.io/service-name"] ?? ""];
        },
      },
    });
    informer.start();
    assert.equal(await informer.waitForSync(), true);
    assert.deepEqual(
      informer.byIndex("service", "web").map((s) => s.metadata?.name),
      ["good"],
    );
    assert.deepEqual(informer.keys(), ["ns/good"]);
    assert.deepEqual(skipped(lines), ["indexing ns/bad"]);
  });

  test("a handler that throws on one object: other objects and other handlers still get their events", async () => {
    const api = new FakeApi();
    await seedTwo(api);
    const { informer, lines } = sliceInformer(api, {});
    const seen: string[] = [];
    informer.addEventHandler({
      onAdd: (s) => {
        if (poisoned(s)) throw new Error("handler cannot take it");
      },
    });
    informer.addEventHandler({ onAdd: (s) => seen.push(s.metadata?.name ?? "") });
    informer.start();
    assert.equal(await informer.waitForSync(), true);
    assert.deepEqual(seen.sort(), ["bad", "good"]);
    assert.deepEqual(skipped(lines), ["onAdd ns/bad"]);
  });

  test("an informer that cannot list says why it is not synced", async () => {
    const api = new FakeApi();
    api.failNext("list", 403);
    const { informer } = sliceInformer(api, {});
    assert.equal(informer.notSyncedReason(), "waiting for the first list");
    informer.start();
    for (let i = 0; i < 20 && informer.notSyncedReason() === "waiting for the first list"; i++)
      await flushAsync();
    assert.match(informer.notSyncedReason() ?? "", /^list\/watch failed: /);
  });
});
