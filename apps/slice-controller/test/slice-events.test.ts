import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type EndpointSlice, trackerExpectDeletion, trackerUpdate } from "@switchyard/slice-controller";
import type { TrackerRef } from "../src/apply.js";
import { sliceEventHandler } from "../src/slice-events.js";

const slice = (
  uid: string,
  generation: number,
  managedBy = "endpointslice-controller.k8s.io",
  svc = "web",
): EndpointSlice => ({
  metadata: {
    name: `s-${uid}`,
    namespace: "ns",
    uid,
    generation,
    labels: { "kubernetes.io/service-name": svc, "endpointslice.kubernetes.io/managed-by": managedBy },
  },
  addressType: "IPv4",
  endpoints: [],
});

function setup() {
  const queued: string[] = [];
  const tracker: TrackerRef = { value: {} };
  const handler = sliceEventHandler({
    managedBy: "endpointslice-controller.k8s.io",
    tracker,
    enqueue: (k) => queued.push(k),
  });
  return { queued, tracker, handler };
}

describe("EndpointSlice events", () => {
  test("the echo of our own write is ignored; a newer generation is not", () => {
    const { queued, tracker, handler } = setup();
    tracker.value = trackerUpdate(tracker.value, slice("a", 2));
    handler.onAdd?.(slice("a", 2));
    assert.deepEqual(queued, []);
    handler.onUpdate?.(slice("a", 2), slice("a", 3));
    assert.deepEqual(queued, ["ns/web"]);
  });

  test("slices managed by someone else are ignored, unless they change hands", () => {
    const { queued, handler } = setup();
    handler.onAdd?.(slice("b", 1, "someone-else"));
    assert.deepEqual(queued, []);
    handler.onUpdate?.(slice("b", 1), slice("b", 2, "someone-else"));
    assert.deepEqual(queued, ["ns/web"]);
  });

  test("relabelling to another Service syncs both", () => {
    const { queued, handler } = setup();
    handler.onUpdate?.(slice("c", 1, undefined, "web"), slice("c", 1, undefined, "api"));
    assert.deepEqual(queued, ["ns/web", "ns/api"]);
  });

  test("a deletion we did not make syncs the Service; one we made does not", () => {
    const { queued, tracker, handler } = setup();
    tracker.value = trackerUpdate(tracker.value, slice("d", 1));
    tracker.value = trackerExpectDeletion(tracker.value, slice("e", 1));
    handler.onDelete?.(slice("e", 1));
    assert.deepEqual(queued, []);
    handler.onDelete?.(slice("d", 1));
    assert.deepEqual(queued, ["ns/web"]);
    assert.deepEqual(tracker.value["ns/web"], {});
  });
});
