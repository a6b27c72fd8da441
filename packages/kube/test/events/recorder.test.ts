import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Event } from "kubernetes-types/core/v1.js";
import { EventRecorder } from "../../src/events/recorder.js";
import { Logger } from "../../src/log/logger.js";
import { events } from "../../src/rest/resources.js";
import { FakeApi } from "../../src/testing/fake-api.js";
import { FakeClock } from "../../src/testing/fake-clock.js";

const svc = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { namespace: "shop", name: "web", uid: "u-1", resourceVersion: "7" },
};

async function stored(api: FakeApi): Promise<Event[]> {
  return (await api.list(events, { namespace: "shop" })).items;
}

function setup(extra: { spamBurst?: number } = {}) {
  const api = new FakeApi();
  const clock = new FakeClock();
  const lines: string[] = [];
  const logger = new Logger({ out: { write: (l: string) => lines.push(l) }, level: "debug" });
  const recorder = new EventRecorder({
    client: api,
    component: "slice-controller",
    host: "node-1",
    clock,
    logger,
    ...extra,
  });
  return { api, clock, recorder, lines };
}

describe("EventRecorder", () => {
  test("writes a core/v1 Event about the object without blocking the caller", async () => {
    const { api, recorder } = setup();
    recorder.eventf(svc, "Warning", "FailedToUpdateEndpointSlices", "%d slices failed", 2);
    assert.equal((await stored(api)).length, 0, "nothing written synchronously");
    await recorder.flush();
    const [event] = await stored(api);
    assert.equal(event?.message, "2 slices failed");
    assert.equal(event?.type, "Warning");
    assert.equal(event?.count, 1);
    assert.deepEqual(event?.involvedObject, { ...svc.metadata, apiVersion: "v1", kind: "Service" });
    assert.deepEqual(event?.source, { component: "slice-controller", host: "node-1" });
    assert.match(event?.metadata?.name ?? "", /^web\.[0-9a-f]+$/);
  });

  test("identical events bump the count of one Event instead of creating more", async () => {
    const { api, clock, recorder } = setup();
    recorder.event(svc, "Normal", "Synced", "ok");
    await clock.advance(5000);
    recorder.event(svc, "Normal", "Synced", "ok");
    recorder.event(svc, "Normal", "Synced", "ok");
    recorder.event(svc, "Normal", "Other", "ok");
    await recorder.flush();
    const all = await stored(api);
    assert.equal(all.length, 2);
    const synced = all.find((e) => e.reason === "Synced");
    assert.equal(synced?.count, 3);
    assert.notEqual(synced?.lastTimestamp, synced?.firstTimestamp);
  });

  test("many similar events with different messages are combined", async () => {
    const { api, recorder } = setup();
    for (let i = 0; i < 15; i++) recorder.event(svc, "Warning", "Failed", `attempt ${i}`);
    await recorder.flush();
    const all = await stored(api);
    // Nine distinct messages, then one combined Event counting the rest.
    assert.equal(all.length, 10);
    const combined = all.find((e) => e.message?.startsWith("(combined from similar events)"));
    assert.equal(combined?.count, 6);
    assert.equal(combined?.message, "(combined from similar events): attempt 14");
  });

  test("warnings do not use up the spam budget of Normal events (per type, as client-go)", async () => {
    const { api, recorder } = setup({ spamBurst: 5 });
    for (let i = 0; i < 30; i++) recorder.event(svc, "Warning", "Disabled", `not now (${i % 2})`);
    recorder.event(svc, "Normal", "Enabled", "back");
    await recorder.flush();
    const all = await stored(api);
    assert.ok(
      all.some((e) => e.reason === "Enabled"),
      "the Normal event after a run of warnings is recorded",
    );
    const warnings = all.filter((e) => e.type === "Warning").reduce((n, e) => n + (e.count ?? 1), 0);
    assert.equal(warnings, 5, "the warnings themselves are throttled");
  });

  test("a hot loop is throttled per object by the spam filter", async () => {
    const { api, clock, recorder } = setup({ spamBurst: 5 });
    for (let i = 0; i < 50; i++) recorder.event(svc, "Normal", "Loop", "again");
    await recorder.flush();
    assert.equal((await stored(api))[0]?.count, 5);
    recorder.event(
      { ...svc, metadata: { ...svc.metadata, name: "other", uid: "u-2" } },
      "Normal",
      "Loop",
      "x",
    );
    await clock.advance(300_000);
    recorder.event(svc, "Normal", "Loop", "again");
    await recorder.flush();
    const all = await stored(api);
    assert.equal(all.length, 2, "another object has its own bucket");
    assert.equal(
      all.find((e) => e.involvedObject.name === "web")?.count,
      6,
      "one token back after 5 minutes",
    );
  });

  test("API failures are logged and the event dropped; later events still go out", async () => {
    const { api, recorder, lines } = setup();
    api.failNext("create", 500);
    recorder.event(svc, "Normal", "First", "lost");
    recorder.event(svc, "Normal", "Second", "kept");
    await recorder.flush();
    assert.deepEqual(
      (await stored(api)).map((e) => e.reason),
      ["Second"],
    );
    assert.ok(lines.some((l) => JSON.parse(l).msg === "could not write event, dropping it"));
  });

  test("an Event deleted on the server is created again with the running count", async () => {
    const { api, recorder } = setup();
    recorder.event(svc, "Normal", "Synced", "ok");
    await recorder.flush();
    const [first] = await stored(api);
    await api.delete(events, first?.metadata?.name ?? "", { namespace: "shop" });
    recorder.event(svc, "Normal", "Synced", "ok");
    recorder.event(svc, "Normal", "Synced", "ok");
    await recorder.flush();
    const all = await stored(api);
    assert.equal(all.length, 1);
    assert.equal(all[0]?.metadata?.name, first?.metadata?.name);
    assert.equal(all[0]?.count, 3);
  });
});
