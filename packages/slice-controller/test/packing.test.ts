import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CONTROLLER_NAME, LABEL_MANAGED_BY, LABEL_SERVICE_NAME } from "../src/index.js";
import {
  applyPlan,
  endpointCount,
  expectedEndpoint,
  makePod,
  makePods,
  makeService,
  makeSlice,
  podIPv4,
} from "./fixtures.js";
import { run, writes } from "./reconcile-helpers.js";

describe("packing", () => {
  test("250 pods become 3 new slices of 100, 100 and 50", () => {
    const plan = run({ pods: makePods(250) });
    assert.deepEqual(writes(plan), { create: 3, update: 0, delete: 0 });
    assert.deepEqual(endpointCount(plan.toCreate), [100, 100, 50]);
    assert.deepEqual(
      plan.toCreate[2]?.endpoints.map((e) => e.addresses[0]),
      Array.from({ length: 50 }, (_, i) => podIPv4(200 + i)),
    );
    assert.equal(plan.metrics.endpointsAdded, 250);
    assert.equal(plan.metrics.numEndpointSlices, 3);
    assert.equal(plan.metrics.desiredEndpointSlices, 3);
  });

  test("a second reconcile of the same state writes nothing", () => {
    const pods = makePods(250);
    const slices = applyPlan([], run({ pods }));
    assert.deepEqual(writes(run({ pods, existingSlices: slices })), { create: 0, update: 0, delete: 0 });
  });

  test("one pod turning not-ready updates exactly the slice that holds it, in place", () => {
    const pods = makePods(250);
    const slices = applyPlan([], run({ pods }));
    const changed = pods.map((p, i) => (i === 120 ? makePod(120, { ready: false }) : p));
    const plan = run({ pods: changed, existingSlices: slices });
    assert.deepEqual(writes(plan), { create: 0, update: 1, delete: 0 });
    const [updated] = plan.toUpdate;
    assert.equal(updated?.metadata?.name, slices[1]?.metadata?.name);
    assert.equal(updated?.endpoints.length, 100);
    const endpoint = updated?.endpoints.find((e) => e.targetRef?.name === "pod-120");
    assert.deepEqual(endpoint?.conditions, { ready: false, serving: false, terminating: false });
    assert.equal(plan.metrics.endpointsUpdated, 1);
    assert.equal(plan.metrics.endpointsAdded, 0);
  });

  test("a changed Pod resourceVersion alone does not rewrite the slice", () => {
    const existing = [
      makeSlice("web-1", [
        expectedEndpoint(0, { targetRef: { ...expectedEndpoint(0).targetRef, resourceVersion: "7" } }),
      ]),
    ];
    assert.deepEqual(writes(run({ pods: [makePod(0)], existingSlices: existing })), {
      create: 0,
      update: 0,
      delete: 0,
    });
  });

  test("scaling down leaves partially filled slices and never merges them", () => {
    const pods = makePods(250);
    const slices = applyPlan([], run({ pods }));
    // Remove 60 from the first slice and 30 from the second.
    const kept = pods.filter((_, i) => !(i < 60 || (i >= 100 && i < 130)));
    const plan = run({ pods: kept, existingSlices: slices });
    assert.deepEqual(writes(plan), { create: 0, update: 2, delete: 0 });
    assert.deepEqual(endpointCount(plan.toUpdate), [40, 70]);
    assert.equal(plan.metrics.endpointsRemoved, 90);
    assert.equal(plan.metrics.numEndpointSlices, 3);
    assert.equal(plan.metrics.desiredEndpointSlices, 2);
    assert.equal(plan.metrics.fragmentationRatio, 1.5);
  });

  test("a slice that loses all its endpoints is deleted", () => {
    const pods = makePods(150);
    const slices = applyPlan([], run({ pods }));
    const plan = run({ pods: pods.slice(0, 100), existingSlices: slices });
    assert.deepEqual(writes(plan), { create: 0, update: 0, delete: 1 });
    assert.equal(plan.toDelete[0]?.metadata?.name, slices[1]?.metadata?.name);
  });

  test("new endpoints top up slices already being updated, fullest first", () => {
    const existing = [
      makeSlice("small", [expectedEndpoint(0), expectedEndpoint(1), expectedEndpoint(2)]),
      makeSlice(
        "big",
        [5, 6, 7, 8, 9].map((i) => expectedEndpoint(i)),
      ),
    ];
    // Pods 2 and 9 go away, so both slices are updated; two new pods arrive.
    const pods = [0, 1, 5, 6, 7, 8, 20, 21].map((i) => makePod(i));
    const plan = run({ pods, existingSlices: existing, options: { maxEndpointsPerSlice: 5 } });
    assert.deepEqual(writes(plan), { create: 0, update: 2, delete: 0 });
    const big = plan.toUpdate.find((s) => s.metadata?.name === "big");
    const small = plan.toUpdate.find((s) => s.metadata?.name === "small");
    assert.deepEqual(
      big?.endpoints.map((e) => e.targetRef?.name),
      ["pod-5", "pod-6", "pod-7", "pod-8", "pod-20"],
    );
    assert.deepEqual(
      small?.endpoints.map((e) => e.targetRef?.name),
      ["pod-0", "pod-1", "pod-21"],
    );
  });

  test("leftovers go to the unchanged slice that ends closest to full", () => {
    const existing = [
      makeSlice(
        "three",
        [0, 1, 2].map((i) => expectedEndpoint(i)),
      ),
      makeSlice(
        "seven",
        [10, 11, 12, 13, 14, 15, 16].map((i) => expectedEndpoint(i)),
      ),
      makeSlice(
        "nine",
        [20, 21, 22, 23, 24, 25, 26, 27, 28].map((i) => expectedEndpoint(i)),
      ),
    ];
    const pods = [0, 1, 2, 10, 11, 12, 13, 14, 15, 16, 20, 21, 22, 23, 24, 25, 26, 27, 28, 40, 41].map((i) =>
      makePod(i),
    );
    const plan = run({ pods, existingSlices: existing, options: { maxEndpointsPerSlice: 10 } });
    // "nine" cannot take 2; "seven" ends at 9 of 10, closer than "three" at 5.
    assert.deepEqual(writes(plan), { create: 0, update: 1, delete: 0 });
    assert.equal(plan.toUpdate[0]?.metadata?.name, "seven");
    assert.equal(plan.toUpdate[0]?.endpoints.length, 9);
  });

  test("leftovers that fit no unchanged slice get a new slice rather than being split", () => {
    const existing = [
      makeSlice(
        "nine",
        [1, 2, 3, 4, 5, 6, 7, 8, 9].map((i) => expectedEndpoint(i)),
      ),
    ];
    const pods = [1, 2, 3, 4, 5, 6, 7, 8, 9, 30, 31].map((i) => makePod(i));
    const plan = run({ pods, existingSlices: existing, options: { maxEndpointsPerSlice: 10 } });
    assert.deepEqual(writes(plan), { create: 1, update: 0, delete: 0 });
    assert.deepEqual(endpointCount(plan.toCreate), [2]);
  });

  test("a full batch of leftovers always creates, even when unchanged slices have room", () => {
    const existing = [makeSlice("one", [expectedEndpoint(1)])];
    const pods = [1, 2, 3, 4, 5].map((i) => makePod(i));
    const plan = run({ pods, existingSlices: existing, options: { maxEndpointsPerSlice: 4 } });
    assert.deepEqual(writes(plan), { create: 1, update: 0, delete: 0 });
    assert.deepEqual(endpointCount(plan.toCreate), [4]);
  });

  test("slices not owned by this Service are deleted, even with matching endpoints", () => {
    const stranger = makeSlice("old", [expectedEndpoint(0)], {
      service: makeService({ uid: "previous-uid" }),
    });
    const plan = run({ pods: [makePod(0)], existingSlices: [stranger] });
    assert.deepEqual(writes(plan), { create: 1, update: 0, delete: 1 });
    assert.equal(plan.toDelete[0]?.metadata?.name, "old");
  });

  test("a slice whose Service labels drifted is updated with the new labels", () => {
    const existing = [makeSlice("web-1", [expectedEndpoint(0)])];
    const plan = run({
      service: makeService({ labels: { team: "blue" } }),
      pods: [makePod(0)],
      existingSlices: existing,
    });
    assert.deepEqual(writes(plan), { create: 0, update: 1, delete: 0 });
    assert.deepEqual(plan.toUpdate[0]?.metadata?.labels, {
      team: "blue",
      [LABEL_SERVICE_NAME]: "web",
      [LABEL_MANAGED_BY]: CONTROLLER_NAME,
    });
  });

  test("maxEndpointsPerSlice is validated to 1..1000", () => {
    for (const bad of [0, 1001, 2.5]) {
      assert.throws(() => run({ options: { maxEndpointsPerSlice: bad } }), RangeError);
    }
    assert.doesNotThrow(() => run({ options: { maxEndpointsPerSlice: 1000 } }));
  });
});
