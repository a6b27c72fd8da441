import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { applyPlan, makePod, makePods, makeService } from "./fixtures.js";
import { run } from "./reconcile-helpers.js";

describe("metrics", () => {
  test("a fresh Service: added, desired and actual slices", () => {
    const { metrics } = run({ pods: makePods(250) });
    assert.deepEqual(
      {
        added: metrics.endpointsAdded,
        removed: metrics.endpointsRemoved,
        desired: metrics.endpointsDesired,
        slices: metrics.numEndpointSlices,
        desiredSlices: metrics.desiredEndpointSlices,
        ratio: metrics.fragmentationRatio,
      },
      { added: 250, removed: 0, desired: 250, slices: 3, desiredSlices: 3, ratio: 1 },
    );
    assert.deepEqual(metrics.perAddressType, [{ addressType: "IPv4", added: 250, removed: 0, updated: 0 }]);
  });

  test("fragmentation after scale-down counts the slices that will exist", () => {
    const pods = makePods(300);
    const slices = applyPlan([], run({ pods }));
    // Keep 10 in each of the three slices: 30 endpoints want 1 slice but occupy 3.
    const kept = pods.filter((_, i) => i % 100 < 10);
    const { metrics } = run({ pods: kept, existingSlices: slices });
    assert.equal(metrics.endpointsRemoved, 270);
    assert.equal(metrics.numEndpointSlices, 3);
    assert.equal(metrics.desiredEndpointSlices, 1);
    assert.equal(metrics.fragmentationRatio, 3);
  });

  test("dual-stack counts both families", () => {
    const service = makeService({ ipFamilies: ["IPv4", "IPv6"] });
    const pods = [0, 1, 2].map((i) => makePod(i, { ips: [`10.0.0.${i + 1}`, `fd00::${i + 1}`] }));
    const { metrics } = run({ service, pods, options: { maxEndpointsPerSlice: 2 } });
    assert.equal(metrics.endpointsDesired, 6);
    assert.equal(metrics.numEndpointSlices, 4);
    assert.equal(metrics.desiredEndpointSlices, 4);
    assert.deepEqual(
      metrics.perAddressType.map((t) => [t.addressType, t.added]),
      [
        ["IPv4", 3],
        ["IPv6", 3],
      ],
    );
  });

  test("a placeholder counts as one slice with no endpoints", () => {
    const { metrics } = run({ pods: [] });
    assert.equal(metrics.endpointsDesired, 0);
    assert.equal(metrics.numEndpointSlices, 1);
    assert.equal(metrics.desiredEndpointSlices, 1);
  });
});
