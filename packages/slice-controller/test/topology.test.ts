import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ANNOTATION_TOPOLOGY_AWARE_HINTS,
  ANNOTATION_TOPOLOGY_MODE,
  allocate,
  EMPTY_TOPOLOGY_CACHE,
  overloadedServices,
  parseMilliQuantity,
  setTopologyNodes,
  type TopologyCacheState,
  topologyHintsEnabled,
} from "../src/index.js";
import { applyPlan, deepFreeze, makeNode, makePod, makeService } from "./fixtures.js";
import { run, writes } from "./reconcile-helpers.js";

// CPU 4 / 4 / 2 gives ratios 0.4 / 0.4 / 0.2.
const nodes = deepFreeze([
  makeNode("node-a-1", "a", "4"),
  makeNode("node-b-1", "b", "4000m"),
  makeNode("node-c-1", "c", "2"),
]);
const cache = deepFreeze(setTopologyNodes(EMPTY_TOPOLOGY_CACHE, nodes));
const auto = makeService({ annotations: { [ANNOTATION_TOPOLOGY_MODE]: "Auto" } });
const podsIn = (zones: string) => [...zones].map((z, i) => makePod(i, { node: `node-${z}-1` }));

describe("annotation", () => {
  const cases: [Record<string, string>, boolean][] = [
    [{ [ANNOTATION_TOPOLOGY_MODE]: "Auto" }, true],
    [{ [ANNOTATION_TOPOLOGY_MODE]: "auto" }, true],
    [{ [ANNOTATION_TOPOLOGY_MODE]: "AUTO" }, false],
    [{ [ANNOTATION_TOPOLOGY_AWARE_HINTS]: "auto" }, true],
    [{ [ANNOTATION_TOPOLOGY_AWARE_HINTS]: "Disabled", [ANNOTATION_TOPOLOGY_MODE]: "Auto" }, false],
    [{}, false],
  ];
  for (const [annotations, want] of cases) {
    test(JSON.stringify(annotations), () => assert.equal(topologyHintsEnabled(annotations), want));
  }
});

describe("node ratios", () => {
  test("allocatable CPU per zone over the total", () => {
    assert.deepEqual(cache.cpuRatiosByZone, { a: 0.4, b: 0.4, c: 0.2 });
  });

  test("control-plane and not-ready nodes are ignored", () => {
    const state = setTopologyNodes(EMPTY_TOPOLOGY_CACHE, [
      ...nodes,
      makeNode("cp", "c", "64", { labels: { "node-role.kubernetes.io/control-plane": "" } }),
      makeNode("down", "c", "64", { ready: false }),
    ]);
    assert.deepEqual(state.cpuRatiosByZone, cache.cpuRatiosByZone);
  });

  test("a node without zone or CPU, or a single zone, clears the ratios", () => {
    assert.equal(setTopologyNodes(cache, [...nodes, makeNode("x", undefined)]).cpuRatiosByZone, null);
    assert.equal(setTopologyNodes(cache, [...nodes, makeNode("x", "a", "0")]).cpuRatiosByZone, null);
    assert.equal(setTopologyNodes(cache, [makeNode("x", "a")]).cpuRatiosByZone, null);
  });

  test("CPU quantities", () => {
    assert.deepEqual(
      ["4", "3500m", "1.5", "0.1", "2k", "1e3"].map(parseMilliQuantity),
      [4000, 3500, 1500, 100, 2000000, 1000000],
    );
  });
});

describe("allocation", () => {
  test("10 endpoints over 0.4/0.4/0.2: minimum ceil(desired/1.2), maximum minimum plus the slack", () => {
    const result = allocate(cache, 10);
    assert.ok(result.ok);
    assert.deepEqual(Object.fromEntries(result.allocations), {
      a: { minimum: 4, desired: 4, maximum: 4 },
      b: { minimum: 4, desired: 4, maximum: 4 },
      c: { minimum: 2, desired: 2, maximum: 2 },
    });
  });

  test("20 endpoints: minima 7/7/4 leave 2 spare, so each maximum is minimum + 2", () => {
    const result = allocate(cache, 20);
    assert.ok(result.ok);
    const a = result.allocations.get("a");
    const c = result.allocations.get("c");
    assert.deepEqual([a?.minimum, a?.maximum, c?.minimum, c?.maximum], [7, 9, 4, 6]);
  });

  test("refusals", () => {
    const twoZones = setTopologyNodes(EMPTY_TOPOLOGY_CACHE, [makeNode("a", "a"), makeNode("b", "b")]);
    assert.deepEqual(allocate(cache, 2), {
      ok: false,
      message: "Insufficient number of endpoints (2 endpoints, 3 zones)",
    });
    // 3 over 0.5/0.5: each minimum is ceil(1.5/1.2) = 2, and 2 + 2 > 3.
    assert.deepEqual(allocate(twoZones, 3), {
      ok: false,
      message:
        "Unable to allocate minimum required endpoints to each zone without exceeding overload threshold (3 endpoints, 2 zones)",
    });
    assert.deepEqual(allocate(EMPTY_TOPOLOGY_CACHE, 10), {
      ok: false,
      message: "Nodes only ready in one zone",
    });
    assert.deepEqual(allocate({ ...cache, cpuRatiosByZone: null }, 10), {
      ok: false,
      message: "Insufficient Node information: allocatable CPU or zone not specified on one or more nodes",
    });
  });
});

describe("Auto hints through reconcile", () => {
  test("zones above their share donate endpoints to zones below it", () => {
    // 6 in a, 3 in b, 1 in c; targets are 4 / 4 / 2, so a gives one to b and one to c.
    const plan = run({ service: auto, pods: podsIn("aaaaaabbbc"), nodes, topologyCache: cache });
    const hints = plan.toCreate[0]?.endpoints.map((e) => e.hints?.forZones?.map((z) => z.name).join());
    assert.deepEqual(hints, ["b", "c", "a", "a", "a", "a", "b", "b", "b", "c"]);
    assert.deepEqual(plan.events, [
      {
        type: "Normal",
        reason: "TopologyAwareHintsEnabled",
        message: "Topology Aware Hints has been enabled, addressType: IPv4",
      },
    ]);
    assert.deepEqual(plan.topologyCache?.endpointsByService, { "ns/web": { IPv4: { a: 4, b: 4, c: 2 } } });
    assert.deepEqual(plan.topologyCache?.hintsPopulated, ["ns/web"]);
    assert.equal(plan.metrics.topology, "Auto");
  });

  test("hints withheld, then possible again: Disabled, then Enabled once more (topology-auto's flaps)", () => {
    const on = run({ service: auto, pods: podsIn("aaaaaabbbc"), nodes, topologyCache: cache });
    const off = run({
      service: auto,
      pods: podsIn("ab"),
      nodes,
      existingSlices: applyPlan([], on),
      topologyCache: on.topologyCache as TopologyCacheState,
    });
    assert.deepEqual(
      off.events.map((e) => `${e.reason}: ${e.message}`),
      [
        "TopologyAwareHintsDisabled: Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4",
      ],
    );
    const again = run({
      service: auto,
      pods: podsIn("aaaaaabbbc"),
      nodes,
      existingSlices: applyPlan(applyPlan([], on), off),
      topologyCache: off.topologyCache as TopologyCacheState,
    });
    assert.deepEqual(
      again.events.map((e) => `${e.type} ${e.reason}`),
      ["Normal TopologyAwareHintsEnabled"],
    );
  });

  test("the next sync keeps fitting hints, writes nothing and emits no event", () => {
    const pods = podsIn("aaaaaabbbc");
    const first = run({ service: auto, pods, nodes, topologyCache: cache });
    const slices = applyPlan([], first);
    const second = run({
      service: auto,
      pods,
      nodes,
      existingSlices: slices,
      topologyCache: first.topologyCache as TopologyCacheState,
    });
    assert.deepEqual(writes(second), { create: 0, update: 0, delete: 0 });
    assert.deepEqual(second.events, []);
  });

  test("too few endpoints: hints removed with a TopologyAwareHintsDisabled warning", () => {
    const plan = run({ service: auto, pods: podsIn("ab"), nodes, topologyCache: cache });
    assert.deepEqual(
      plan.toCreate[0]?.endpoints.map((e) => e.hints),
      [undefined, undefined],
    );
    assert.deepEqual(plan.events, [
      {
        type: "Warning",
        reason: "TopologyAwareHintsDisabled",
        message: "Insufficient number of endpoints (2 endpoints, 3 zones), addressType: IPv4",
      },
    ]);
  });

  test("an endpoint without a zone disables hints", () => {
    const pods = [...podsIn("aaaabbbbc"), makePod(9, { node: "nozone" })];
    const plan = run({
      service: auto,
      pods,
      nodes: [...nodes, makeNode("nozone", undefined)],
      topologyCache: cache,
    });
    assert.ok(plan.toCreate[0]?.endpoints.every((e) => e.hints === undefined));
    assert.equal(
      plan.events[0]?.message,
      "One or more endpoints do not have a zone specified, addressType: IPv4",
    );
  });

  test("before any Node is known, hints are off because nodes are ready in one zone only", () => {
    const plan = run({ service: auto, pods: podsIn("abc"), nodes, topologyCache: EMPTY_TOPOLOGY_CACHE });
    assert.equal(plan.events[0]?.message, "Nodes only ready in one zone, addressType: IPv4");
  });

  test("removing the annotation strips hints and emits one Disabled event", () => {
    const pods = podsIn("aaaaaabbbc");
    const first = run({ service: auto, pods, nodes, topologyCache: cache });
    const slices = applyPlan([], first);
    const plan = run({
      service: makeService(),
      pods,
      nodes,
      existingSlices: slices,
      topologyCache: first.topologyCache as TopologyCacheState,
    });
    assert.deepEqual(writes(plan), { create: 0, update: 1, delete: 0 });
    assert.ok(plan.toUpdate[0]?.endpoints.every((e) => e.hints === undefined));
    assert.deepEqual(plan.events, [
      {
        type: "Warning",
        reason: "TopologyAwareHintsDisabled",
        message: "Topology Aware Hints has been disabled, addressType: IPv4",
      },
    ]);
    assert.deepEqual(plan.topologyCache?.hintsPopulated, []);
    assert.deepEqual(plan.topologyCache?.endpointsByService, {});
  });

  test("a Service whose zone share no longer meets its minimum is overloaded", () => {
    const first = run({ service: auto, pods: podsIn("aaaaaabbbc"), nodes, topologyCache: cache });
    const state = first.topologyCache as TopologyCacheState;
    assert.deepEqual(overloadedServices(state), []);
    // Zone c grows to 0.5 of the CPU: it would need ceil(10 * 0.5 / 1.2) = 5 endpoints, it has 2.
    const grown = setTopologyNodes(state, [...nodes, makeNode("node-c-2", "c", "8")]);
    assert.deepEqual(overloadedServices(grown), ["ns/web"]);
  });
});
