import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import type { Pod } from "kubernetes-types/core/v1.js";
import { Informer } from "../../src/informer/informer.js";
import { pods } from "../../src/rest/resources.js";
import { FakeApi } from "../../src/testing/fake-api.js";
import { FakeClock, flushAsync } from "../../src/testing/fake-clock.js";
import { makePod, recordEvents } from "../helpers.js";

const stopAll: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stopAll.splice(0)) await stop();
});

async function syncedInformer(api: FakeApi, clock: FakeClock, stallTimeoutMs = 120_000) {
  const informer = new Informer<Pod>({ client: api, resource: pods, clock, random: () => 0, stallTimeoutMs });
  const events = recordEvents();
  informer.addEventHandler(events.handler);
  stopAll.push(() => informer.stop());
  informer.start();
  await informer.waitForSync();
  await flushAsync();
  events.seen.length = 0;
  return { informer, seen: events.seen };
}

const watchCalls = (api: FakeApi) => api.calls.filter((c) => c.startsWith("watch")).length;
const listCalls = (api: FakeApi) => api.calls.filter((c) => c.startsWith("list")).length;

/** While the informer is not watching, delete a, change b, add c; then compact history. */
async function changeBehindItsBack(api: FakeApi) {
  api.silent = true;
  await api.delete(pods, "a", { namespace: "ns" });
  const b = api.peek(pods, "ns", "b");
  assert.ok(b);
  await api.update(pods, { ...b, metadata: { ...b.metadata, labels: { app: "b2" } } });
  await api.create(pods, makePod("ns", "c"));
  api.compact();
  api.silent = false;
}

describe("Informer resilience", () => {
  for (const goneAsWatchEvent of [true, false]) {
    test(`relists after 410 (${goneAsWatchEvent ? "ERROR event" : "HTTP 410"}) and ends with the right cache`, async () => {
      const api = new FakeApi({ goneAsWatchEvent });
      const clock = new FakeClock();
      await api.seed(pods, makePod("ns", "a"));
      await api.seed(pods, makePod("ns", "b"));
      await api.seed(pods, makePod("ns", "d"));
      const { informer, seen } = await syncedInformer(api, clock);
      const staleRv = informer.lastSyncResourceVersion();

      await changeBehindItsBack(api);
      api.breakWatches();
      // First restart waits one backoff step (200 ms), gets 410 and relists at once.
      await clock.advance(200);

      assert.equal(listCalls(api), 2);
      assert.deepEqual(seen, ["delete ns/a", "update ns/b", "add ns/c"]);
      assert.deepEqual(informer.keys().sort(), ["ns/b", "ns/c", "ns/d"]);
      assert.equal(informer.get("ns", "b")?.metadata?.labels?.app, "b2");
      assert.notEqual(informer.lastSyncResourceVersion(), staleRv);
      assert.equal(informer.lastSyncResourceVersion(), api.resourceVersion);
      // ...and it keeps watching from the new list.
      await api.create(pods, makePod("ns", "e"));
      await flushAsync();
      assert.deepEqual(seen.at(-1), "add ns/e");
    });
  }

  test("restarts with capped exponential backoff after errors and never stops", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const { seen } = await syncedInformer(api, clock);
    for (let i = 0; i < 10; i++) api.failNext("watch", 500);
    const before = watchCalls(api);
    api.breakWatches();
    await flushAsync();

    // Attempts land at 200, 600, 1400, 3000 ... ms after the break: each wait doubles.
    const attemptTimes: number[] = [];
    const start = clock.now();
    for (let t = 0; t < 200_000; t += 100) {
      const calls = watchCalls(api);
      await clock.advance(100);
      if (watchCalls(api) > calls) attemptTimes.push(clock.now() - start);
    }
    const gaps = attemptTimes.slice(1).map((t, i) => t - (attemptTimes[i] ?? 0));
    assert.deepEqual(attemptTimes.slice(0, 4), [200, 600, 1400, 3000]);
    assert.deepEqual(gaps.slice(0, 6), [400, 800, 1600, 3200, 6400, 12800]);
    assert.ok(
      gaps.every((g) => g <= 30_000),
      `gaps capped at 30 s: ${gaps}`,
    );
    assert.equal(watchCalls(api) - before, 11);
    assert.equal(listCalls(api), 1, "a 500 is not a reason to relist");

    await api.create(pods, makePod("ns", "late"));
    await flushAsync();
    assert.deepEqual(seen, ["add ns/late"]);
  });

  test("restarts a silent watch once the stall timeout passes", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const { seen } = await syncedInformer(api, clock, 60_000);
    api.silent = true;
    await api.create(pods, makePod("ns", "missed"));
    await clock.advance(30_000);
    assert.deepEqual(seen, []);
    api.silent = false;
    // Stall at 60 s, then one backoff step (200 ms) before the new watch.
    await clock.advance(30_000);
    assert.equal(watchCalls(api), 1);
    await clock.advance(200);
    // The new watch resumes from the last resourceVersion and replays what the dead one missed.
    assert.equal(watchCalls(api), 2);
    assert.deepEqual(seen, ["add ns/missed"]);
    assert.equal(listCalls(api), 1);
  });

  test("bookmarks keep a quiet watch alive", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const { informer } = await syncedInformer(api, clock, 60_000);
    for (let i = 0; i < 10; i++) {
      await clock.advance(50_000);
      api.bookmark();
      await flushAsync();
    }
    assert.equal(watchCalls(api), 1);
    assert.equal(informer.lastSyncResourceVersion(), api.resourceVersion);
  });

  test("a failing initial list is retried until it succeeds", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    await api.seed(pods, makePod("ns", "a"));
    api.failNext("list", 503);
    api.failNext("list", new Error("connect ECONNREFUSED"));
    const informer = new Informer<Pod>({ client: api, resource: pods, clock, random: () => 0 });
    stopAll.push(() => informer.stop());
    informer.start();
    await flushAsync();
    assert.equal(informer.hasSynced(), false);
    await clock.advance(600);
    assert.equal(informer.hasSynced(), true);
    assert.equal(listCalls(api), 3);
  });

  test("stop ends the loop and closes the watch", async () => {
    const api = new FakeApi();
    const { informer } = await syncedInformer(api, new FakeClock());
    assert.equal(api.activeWatches(), 1);
    await informer.stop();
    assert.equal(api.activeWatches(), 0);
    assert.equal(informer.isRunning(), false);
  });
});
