import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { ANNOTATION_LAST_CHANGE_TRIGGER_TIME, LABEL_HEADLESS, newEndpointSlice } from "../src/index.js";
import {
  applyPlan,
  expectedEndpoint,
  HTTP_PORTS,
  makeNode,
  makePod,
  makePods,
  makeService,
  makeSlice,
} from "./fixtures.js";
import { run, writes } from "./reconcile-helpers.js";

describe("placeholder slice", () => {
  test("a Service without endpoints gets one empty slice per address type", () => {
    const plan = run({ pods: [] });
    assert.deepEqual(writes(plan), { create: 1, update: 0, delete: 0 });
    assert.deepEqual(plan.toCreate[0]?.endpoints, []);
    assert.deepEqual(plan.toCreate[0]?.ports, []);
    assert.equal(plan.metrics.numEndpointSlices, 1);
    assert.equal(plan.metrics.desiredEndpointSlices, 1);
  });

  test("an identical existing placeholder is kept", () => {
    const slices = applyPlan([], run({ pods: [] }));
    assert.deepEqual(writes(run({ pods: [], existingSlices: slices })), { create: 0, update: 0, delete: 0 });
  });

  test("when the last endpoints go, the slice becomes the placeholder through one update", () => {
    const slices = applyPlan([], run({ pods: [makePod(0)] }));
    const plan = run({ pods: [], existingSlices: slices });
    assert.deepEqual(writes(plan), { create: 1, update: 0, delete: 1 });
    const ops = applyPlan(slices, plan);
    assert.equal(ops.length, 1);
    assert.equal(ops[0]?.metadata?.name, slices[0]?.metadata?.name);
    assert.deepEqual(ops[0]?.endpoints, []);
  });

  test("a placeholder with other labels is replaced", () => {
    const stale = makeSlice("web-p", [], { ports: [], labels: { stale: "yes" } });
    const plan = run({ pods: [], existingSlices: [stale] });
    assert.deepEqual(writes(plan), { create: 1, update: 0, delete: 1 });
  });

  test("pods arriving fill the placeholder in place", () => {
    const placeholder = { ...newEndpointSlice(makeService(), [], "IPv4", "endpointslice-controller.k8s.io") };
    const existing = [{ ...placeholder, metadata: { ...placeholder.metadata, name: "web-p" } }];
    const plan = run({ pods: [makePod(0)], existingSlices: existing });
    // The pods have their own port set, so a new slice is created and the placeholder deleted;
    // finalize turns that pair into one update of web-p.
    assert.deepEqual(writes(plan), { create: 1, update: 0, delete: 1 });
    const after = applyPlan(existing, plan);
    assert.deepEqual(
      after.map((s) => [s.metadata?.name, s.endpoints.length, s.ports]),
      [["web-p", 1, HTTP_PORTS]],
    );
  });
});

describe("address families", () => {
  const dual = makeService({ ipFamilies: ["IPv4", "IPv6"] });
  const dualPods = [0, 1].map((i) => makePod(i, { ips: [`10.0.0.${i + 1}`, `fd00::${i + 1}`] }));

  test("a dual-stack Service gets one slice per family with that family's addresses", () => {
    const plan = run({ service: dual, pods: dualPods });
    assert.deepEqual(
      plan.toCreate.map((s) => [s.addressType, s.endpoints.map((e) => e.addresses[0])]),
      [
        ["IPv4", ["10.0.0.1", "10.0.0.2"]],
        ["IPv6", ["fd00::1", "fd00::2"]],
      ],
    );
  });

  test("IPv6 addresses are published in canonical form", () => {
    const plan = run({
      service: makeService({ ipFamilies: ["IPv6"] }),
      pods: [makePod(0, { ips: ["FD00:0:0:0:0:0:0:1"] })],
    });
    assert.deepEqual(plan.toCreate[0]?.endpoints[0]?.addresses, ["fd00::1"]);
  });

  test("a family the Service no longer has is deleted", () => {
    const slices = applyPlan([], run({ service: dual, pods: dualPods }));
    const plan = run({
      service: makeService({ ipFamilies: ["IPv4"] }),
      pods: dualPods,
      existingSlices: slices,
    });
    assert.deepEqual(writes(plan), { create: 0, update: 0, delete: 1 });
    assert.equal(plan.toDelete[0]?.addressType, "IPv6");
  });

  test("a headless Service without families gets both, with the headless label", () => {
    const plan = run({ service: makeService({ clusterIP: "None" }), pods: [makePod(0)] });
    // No IPv6 pod addresses: the IPv6 side gets a placeholder.
    assert.deepEqual(
      plan.toCreate.map((s) => [s.addressType, s.endpoints.length]),
      [
        ["IPv4", 1],
        ["IPv6", 0],
      ],
    );
    assert.equal(plan.toCreate[0]?.metadata?.labels?.[LABEL_HEADLESS], "");
  });

  test("without families, the ClusterIP's family decides", () => {
    const plan = run({
      service: makeService({ clusterIP: "fd00:30::10" }),
      pods: [makePod(0, { ips: ["fd00::1"] })],
    });
    assert.deepEqual(
      plan.toCreate.map((s) => s.addressType),
      ["IPv6"],
    );
  });
});

describe("pods and nodes", () => {
  test("a Pod whose Node is unknown is skipped and reported", () => {
    const plan = run({ pods: [makePod(0), makePod(1, { node: "gone" })] });
    assert.deepEqual(
      plan.toCreate[0]?.endpoints.map((e) => e.targetRef?.name),
      ["pod-0"],
    );
    assert.deepEqual(plan.errors, ["skipping Pod pod-1 for Service ns/web: Node gone Not Found"]);
  });

  test("with publishNotReadyAddresses the Pod is published without a zone", () => {
    const plan = run({
      service: makeService({ publishNotReadyAddresses: true }),
      pods: [makePod(1, { node: "gone" })],
    });
    const { zone: _zone, ...withoutZone } = expectedEndpoint(1, { nodeName: "gone" });
    assert.deepEqual(plan.toCreate[0]?.endpoints, [withoutZone]);
    assert.deepEqual(plan.errors, []);
  });

  test("nodes can be given as a lookup function", () => {
    const asked: string[] = [];
    const plan = run({
      pods: [makePod(0, { node: "node-b-1" })],
      nodes: (name) => {
        asked.push(name);
        return name === "node-b-1" ? makeNode("node-b-1", "b") : undefined;
      },
    });
    assert.deepEqual(asked, ["node-b-1"]);
    assert.equal(plan.toCreate[0]?.endpoints[0]?.zone, "b");
  });
});

describe("trigger time", () => {
  test("is set on written slices in RFC3339Nano, and removed when absent", () => {
    const plan = run({ pods: makePods(1), triggerTime: new Date("2026-03-01T10:00:00.120Z") });
    assert.equal(
      plan.toCreate[0]?.metadata?.annotations?.[ANNOTATION_LAST_CHANGE_TRIGGER_TIME],
      "2026-03-01T10:00:00.12Z",
    );
    const slices = applyPlan([], plan);
    const next = run({ pods: [makePod(0, { ready: false })], existingSlices: slices });
    assert.deepEqual(next.toUpdate[0]?.metadata?.annotations, {});
  });
});
