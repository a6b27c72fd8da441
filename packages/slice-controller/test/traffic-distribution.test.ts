import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ANNOTATION_TOPOLOGY_MODE } from "../src/index.js";
import { applyPlan, makePod, makeService } from "./fixtures.js";
import { run, writes } from "./reconcile-helpers.js";

const pods = [
  makePod(0, { node: "node-a-1" }),
  makePod(1, { node: "node-b-1" }),
  makePod(2, { node: "node-c-1", ready: false }),
];
const hintsOf = (plan: ReturnType<typeof run>) =>
  plan.toCreate.concat(plan.toUpdate).flatMap((s) => s.endpoints.map((e) => e.hints));

describe("spec.trafficDistribution", () => {
  test("PreferClose hints each ready endpoint for its own zone and leaves not-ready ones alone", () => {
    const plan = run({ service: makeService({ trafficDistribution: "PreferClose" }), pods });
    assert.deepEqual(hintsOf(plan), [
      { forZones: [{ name: "a" }] },
      { forZones: [{ name: "b" }] },
      undefined,
    ]);
    assert.equal(plan.metrics.trafficDistribution, "PreferClose");
    assert.equal(plan.metrics.topology, "Disabled");
  });

  test("PreferSameZone behaves like PreferClose", () => {
    const plan = run({ service: makeService({ trafficDistribution: "PreferSameZone" }), pods });
    assert.deepEqual(hintsOf(plan), [
      { forZones: [{ name: "a" }] },
      { forZones: [{ name: "b" }] },
      undefined,
    ]);
  });

  test("PreferSameNode adds node hints next to zone hints", () => {
    const plan = run({
      service: makeService({ trafficDistribution: "PreferSameNode" }),
      pods: pods.slice(0, 1),
    });
    assert.deepEqual(hintsOf(plan), [{ forZones: [{ name: "a" }], forNodes: [{ name: "node-a-1" }] }]);
  });

  test("without the PreferSame gate only PreferClose is honoured", () => {
    const options = { preferSameTrafficDistribution: false };
    const sameNode = run({ service: makeService({ trafficDistribution: "PreferSameNode" }), pods, options });
    assert.deepEqual(hintsOf(sameNode), [undefined, undefined, undefined]);
    assert.equal(sameNode.metrics.trafficDistribution, "");
    const close = run({ service: makeService({ trafficDistribution: "PreferClose" }), pods, options });
    assert.deepEqual(hintsOf(close)[0], { forZones: [{ name: "a" }] });
  });

  test("hinted slices are not rewritten while the hints are right", () => {
    const service = makeService({ trafficDistribution: "PreferClose" });
    const slices = applyPlan([], run({ service, pods }));
    assert.deepEqual(writes(run({ service, pods, existingSlices: slices })), {
      create: 0,
      update: 0,
      delete: 0,
    });
  });

  test("switching to PreferSameNode rewrites otherwise unchanged slices", () => {
    const slices = applyPlan([], run({ service: makeService({ trafficDistribution: "PreferClose" }), pods }));
    const plan = run({
      service: makeService({ trafficDistribution: "PreferSameNode" }),
      pods,
      existingSlices: slices,
    });
    assert.deepEqual(writes(plan), { create: 0, update: 1, delete: 0 });
    assert.deepEqual(plan.toUpdate[0]?.endpoints[1]?.hints, {
      forZones: [{ name: "b" }],
      forNodes: [{ name: "node-b-1" }],
    });
  });

  test("unsetting the field strips the hints", () => {
    const slices = applyPlan([], run({ service: makeService({ trafficDistribution: "PreferClose" }), pods }));
    const plan = run({ service: makeService(), pods, existingSlices: slices });
    assert.deepEqual(writes(plan), { create: 0, update: 1, delete: 0 });
    assert.deepEqual(hintsOf(plan), [undefined, undefined, undefined]);
  });

  test("the Auto annotation wins even without a topology cache, so no hints are written", () => {
    const service = makeService({
      trafficDistribution: "PreferClose",
      annotations: { [ANNOTATION_TOPOLOGY_MODE]: "Auto" },
    });
    const plan = run({ service, pods });
    assert.deepEqual(hintsOf(plan), [undefined, undefined, undefined]);
    assert.equal(plan.metrics.trafficDistribution, "");
  });
});
