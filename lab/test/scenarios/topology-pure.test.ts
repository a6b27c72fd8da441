import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { chiSquareSurvival, spread } from "../../src/scenarios/hints/answer-stats.js";
import { c13Finding, uniformChain } from "../../src/scenarios/hints/hints-verdicts.js";
import type { SliceEvent } from "../../src/scenarios/kit/slice-watch.js";
import { topologyPath } from "../../src/scenarios/kit/topology-path.js";
import {
  deletedOnScaleDown,
  describeFill,
  sample,
  slicesByPortSet,
  untouched,
} from "../../src/scenarios/slice-churn/slice-stats.js";
import {
  autoCanHint,
  flapPoint,
  hintedByZone,
  worstLoad,
} from "../../src/scenarios/topology-auto/auto-allocation.js";

const ep = (node: string, zone: string, hints?: object, ready = true) => ({
  addresses: ["10.0.0.1"],
  conditions: { ready },
  nodeName: node,
  zone,
  ...(hints ? { hints } : {}),
});
const slice = (endpoints: object[], ports = [{ name: "http", port: 80 }]) =>
  ({ addressType: "IPv4", endpoints, ports }) as unknown as EndpointSlice;
const both = (node: string, zone: string) => ({ forNodes: [{ name: node }], forZones: [{ name: zone }] });

describe("scenario arithmetic", () => {
  test("chi-square survival matches the tables", () => {
    assert.ok(Math.abs(chiSquareSurvival(7.815, 3) - 0.05) < 1e-3);
    assert.ok(Math.abs(chiSquareSurvival(3.841, 1) - 0.05) < 1e-3);
    assert.ok(Math.abs(chiSquareSurvival(23.209, 10) - 0.01) < 1e-3);
    const even = spread([500, 500, 500, 500]);
    assert.equal(even.chiSquare, 0);
    assert.equal(even.pValue, 1);
    const skewed = spread([1000, 400, 300, 300]);
    assert.ok(skewed.pValue < 1e-6);
    assert.equal(skewed.maxRelativeDeviation, 1);
  });

  test("C13: the chain must be 1/n, ..., 1/2 and the spread uniform at the 0.1% level", () => {
    const chain = uniformChain(4);
    assert.deepEqual(chain, ["0.250", "0.333", "0.500"]);
    const seen = (counts: number[], probabilities = chain, mode = "iptables") => ({
      spread: spread(counts),
      probabilities,
      mode,
      failures: 0,
    });
    assert.equal(c13Finding(seen([105, 95, 98, 102])).verdict, "holds");
    // chi-square 13.5 (df 3): p = 0.004, which a uniform pick gives about one run in 270.
    assert.equal(c13Finding(seen([130, 80, 95, 95])).verdict, "holds");
    // 1/n at every step: 25, 19, 14, 42% of 400.
    const broken = seen([100, 75, 56, 169], ["0.250", "0.250", "0.250"]);
    assert.equal(c13Finding(broken).verdict, "wrong");
    assert.ok(broken.spread.pValue < 1e-10);
    assert.equal(c13Finding(seen([105, 95, 98, 102], ["0.250", "0.250", "0.250"])).verdict, "wrong");
    assert.equal(c13Finding(seen([160, 80, 80, 80])).verdict, "wrong");
    assert.equal(c13Finding(seen([100, 100, 100, 100], [], "nftables")).verdict, "not measured");
    const lost = c13Finding({ ...seen([99, 100, 100, 100]), failures: 1 });
    assert.match(lost.measured, /1 connections got no answer/);
  });

  test("the proxy's path: node, zone, or cluster", () => {
    const hinted = slice([
      ep("n1", "a", both("n1", "a")),
      ep("n2", "b", both("n2", "b")),
      ep("n3", "a", both("n3", "a")),
    ]);
    assert.equal(topologyPath([hinted], "n1", "a"), "node");
    const unready = slice([
      ep("n1", "a", both("n1", "a"), false),
      ep("n2", "b", both("n2", "b")),
      ep("n3", "a", both("n3", "a")),
    ]);
    assert.equal(topologyPath([unready], "n1", "a"), "zone");
    const zoneOnly = slice([ep("n1", "a", both("n1", "a")), ep("n3", "a", { forZones: [{ name: "a" }] })]);
    assert.equal(topologyPath([zoneOnly], "n1", "a"), "zone");
    const mixed = slice([ep("n1", "a", both("n1", "a")), ep("n3", "a")]);
    assert.equal(topologyPath([mixed], "n1", "a"), "cluster");
  });

  test("Auto's minimum per zone: on/off by total count, and the first flap", () => {
    const lab = { "zone-a": 2 / 3, "zone-b": 1 / 3 };
    assert.equal(autoCanHint(lab, 2), false);
    assert.equal(autoCanHint(lab, 3), true);
    assert.equal(autoCanHint(lab, 4), false);
    assert.equal(autoCanHint(lab, 22), true);
    assert.equal(flapPoint(lab), 2);
    const three = { a: 1 / 3, b: 1 / 3, c: 1 / 3 };
    assert.equal(autoCanHint(three, 5), false);
    assert.equal(autoCanHint(three, 6), true);
    for (let n = 18; n < 100; n++) assert.ok(autoCanHint(three, n), `${n} endpoints over 3 equal zones`);
  });

  test("worst load: 2 endpoints serving a zone with 2/3 of the traffic", () => {
    const ratios = { a: 2 / 3, b: 1 / 3 };
    const eps = [
      ...Array.from({ length: 2 }, () => ep("n1", "a", { forZones: [{ name: "a" }] })),
      ...Array.from({ length: 20 }, () => ep("n2", "b", { forZones: [{ name: "b" }] })),
    ];
    assert.ok(Math.abs(worstLoad(ratios, [slice(eps)]) - (2 / 3 / 2) * 22) < 1e-9);
    assert.equal(worstLoad(ratios, [slice([ep("n1", "a"), ep("n2", "b")])]), 1);
    assert.deepEqual([...(hintedByZone([slice(eps)]).get("a") ?? [])], [["a", 2]]);
  });

  test("slices: fill, port sets, untouched, sample", () => {
    const s = [
      slice(Array(100).fill(ep("n", "a"))),
      slice(Array(40).fill(ep("n", "a")), [{ name: "http", port: 81 }]),
    ];
    assert.match(describeFill(s, 100), /^2 slices, 140 endpoints, per slice 40\.\.100/);
    assert.equal(slicesByPortSet(s).size, 2);
    assert.equal(
      untouched(
        new Map([
          ["x", "1"],
          ["y", "2"],
        ]),
        new Map([
          ["x", "1"],
          ["y", "3"],
        ]),
      ),
      1,
    );
    const k = sample(100, 30);
    assert.equal(new Set(k).size, 30);
    assert.deepEqual(k, sample(100, 30));
  });

  test("a slice deleted on scale-down is emptied if all its pods went, merged if some lived on", () => {
    const named = (name: string, pods: string[]) =>
      ({
        metadata: { name, labels: { "kubernetes.io/service-name": "web" } },
        endpoints: pods.map((p) => ({ addresses: ["10.0.0.1"], targetRef: { kind: "Pod", name: p } })),
      }) as unknown as EndpointSlice;
    const before = [
      named("a", ["p1", "p2"]),
      named("b", ["p3"]),
      named("c", ["p4", "p5"]),
      named("d", ["p6"]),
    ];
    const gone = (slice: EndpointSlice, service = "web"): SliceEvent => ({
      type: "DELETED",
      name: slice.metadata?.name ?? "",
      service,
      at: 0,
      slice,
    });
    const doomed = new Set(["p1", "p3", "p4"]);
    const events = [gone(before[1] as EndpointSlice), gone(before[2] as EndpointSlice)];
    // b lost its only pod: emptied. c kept p5: merged away. a was written but not deleted.
    assert.deepEqual(deletedOnScaleDown(before, events, "web", doomed), { emptied: 1, merged: 1 });
    // Another Service's deletion is not counted; nothing deleted is nothing merged.
    assert.deepEqual(deletedOnScaleDown(before, [gone(before[3] as EndpointSlice, "db")], "web", doomed), {
      emptied: 0,
      merged: 0,
    });
  });
});
