import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ANNOTATION_TOPOLOGY_MODE,
  EMPTY_TOPOLOGY_CACHE,
  finalize,
  reconcile,
  setTopologyNodes,
} from "../src/index.js";
import { applyPlan, DEFAULT_NODES, deepFreeze, makePod, makePods, makeService } from "./fixtures.js";
import { run } from "./reconcile-helpers.js";

describe("inputs are never modified", () => {
  test("frozen inputs survive every path: packing, hint removal, Auto hints, finalize", () => {
    const cache = setTopologyNodes(EMPTY_TOPOLOGY_CACHE, DEFAULT_NODES);
    const zones = "abc";
    const pods = makePods(30).map((_, i) => makePod(i, { node: `node-${zones[i % 3]}-1` }));
    const hinted = applyPlan([], run({ service: makeService({ trafficDistribution: "PreferClose" }), pods }));
    const input = deepFreeze({
      service: makeService({ annotations: { [ANNOTATION_TOPOLOGY_MODE]: "Auto" } }),
      pods: pods.slice(5),
      nodes: DEFAULT_NODES,
      existingSlices: hinted,
      topologyCache: cache,
      triggerTime: new Date(0),
    });
    const snapshot = JSON.stringify(input);
    const plan = reconcile(input);
    finalize(plan);
    assert.equal(JSON.stringify(input), snapshot);
    assert.ok(plan.toUpdate.length > 0);
  });

  test("written slices are copies, not the caller's objects", () => {
    const slices = applyPlan([], run({ pods: makePods(3) }));
    const plan = run({
      pods: [makePod(0, { ready: false }), makePod(1), makePod(2)],
      existingSlices: slices,
    });
    assert.notEqual(plan.toUpdate[0], slices[0]);
    assert.equal(Object.isFrozen(plan.toUpdate[0]), false);
  });
});
