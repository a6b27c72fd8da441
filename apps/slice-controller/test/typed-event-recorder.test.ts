import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { EventRecorder, type EventRecorderOptions, events } from "@switchyard/kube";
import { FakeApi, FakeClock } from "@switchyard/kube/testing";
import type { Event } from "kubernetes-types/core/v1.js";
import { TypedEventRecorder } from "../src/typed-event-recorder.js";

const svc = {
  apiVersion: "v1",
  kind: "Service",
  metadata: { namespace: "shop", name: "web", uid: "u-1", resourceVersion: "7" },
};

/** A Service whose hints cannot be allocated for 30 syncs, then can: what topology-auto's flaps do. */
async function warningsThenEnabled(make: (o: EventRecorderOptions) => EventRecorder): Promise<Event[]> {
  const api = new FakeApi();
  const recorder = make({ client: api, component: "endpoint-slice-controller", clock: new FakeClock() });
  for (let i = 0; i < 30; i++) {
    recorder.event(
      svc,
      "Warning",
      "TopologyAwareHintsDisabled",
      `Insufficient number of endpoints (${i % 2})`,
    );
  }
  recorder.event(svc, "Normal", "TopologyAwareHintsEnabled", "Topology Aware Hints has been enabled");
  await recorder.flush();
  return (await api.list(events, { namespace: "shop" })).items;
}

describe("TypedEventRecorder", () => {
  test("a burst of Warnings leaves the Normal events their own spam budget, as client-go does", async () => {
    const stored = await warningsThenEnabled((o) => new TypedEventRecorder(o));
    assert.deepEqual(
      stored.filter((e) => e.type === "Normal").map((e) => e.reason),
      ["TopologyAwareHintsEnabled"],
    );
    // Warnings are still throttled: 25 at once, folded into two Events by message.
    const warnings = stored.filter((e) => e.type === "Warning");
    assert.equal(
      warnings.reduce((n, e) => n + (e.count ?? 0), 0),
      25,
    );
  });

  test("with one budget for both types the Normal event is dropped (why the split exists)", async () => {
    const stored = await warningsThenEnabled((o) => new EventRecorder(o));
    assert.deepEqual(
      stored.filter((e) => e.type === "Normal"),
      [],
    );
  });
});
