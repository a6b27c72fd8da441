import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { podToEndpoint, shouldPodBeInEndpoints, shouldSetHostname } from "../src/index.js";
import { deepFreeze, expectedEndpoint, makeNode, makePod, makeService } from "./fixtures.js";
import { run } from "./reconcile-helpers.js";

const nodeA = deepFreeze(makeNode("node-a-1", "a"));

describe("which pods count", () => {
  const cases = [
    { name: "running with an IP", pod: makePod(0), included: true },
    { name: "Succeeded", pod: makePod(0, { phase: "Succeeded" }), included: false },
    { name: "Failed", pod: makePod(0, { phase: "Failed" }), included: false },
    { name: "no IP yet", pod: makePod(0, { ips: [] }), included: false },
    { name: "terminating", pod: makePod(0, { terminating: true }), included: true },
    { name: "not ready", pod: makePod(0, { ready: false }), included: true },
  ];
  for (const c of cases) {
    test(c.name, () => assert.equal(shouldPodBeInEndpoints(deepFreeze(c.pod)), c.included));
  }
});

describe("conditions", () => {
  const cases = [
    { name: "ready", o: {}, pnra: false, want: { ready: true, serving: true, terminating: false } },
    {
      name: "not ready",
      o: { ready: false },
      pnra: false,
      want: { ready: false, serving: false, terminating: false },
    },
    {
      name: "terminating but serving",
      o: { terminating: true },
      pnra: false,
      want: { ready: false, serving: true, terminating: true },
    },
    {
      name: "terminating, not serving",
      o: { terminating: true, ready: false },
      pnra: false,
      want: { ready: false, serving: false, terminating: true },
    },
    {
      name: "publishNotReadyAddresses, not ready",
      o: { ready: false },
      pnra: true,
      want: { ready: true, serving: false, terminating: false },
    },
    {
      name: "publishNotReadyAddresses, terminating",
      o: { terminating: true },
      pnra: true,
      want: { ready: true, serving: true, terminating: true },
    },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const service = deepFreeze(makeService({ publishNotReadyAddresses: c.pnra }));
      const endpoint = podToEndpoint(deepFreeze(makePod(0, c.o)), nodeA, service, "IPv4");
      assert.deepEqual(endpoint.conditions, c.want);
    });
  }
});

describe("endpoint contents", () => {
  test("addresses, nodeName, zone from the Node label, and targetRef", () => {
    const endpoint = podToEndpoint(deepFreeze(makePod(3)), nodeA, deepFreeze(makeService()), "IPv4");
    assert.deepEqual(endpoint, expectedEndpoint(3));
  });

  test("a Node without a zone label gives no zone", () => {
    const endpoint = podToEndpoint(makePod(3), makeNode("node-a-1", undefined), makeService(), "IPv4");
    assert.equal("zone" in endpoint, false);
  });

  test("only addresses of the slice's family are used", () => {
    const pod = makePod(0, { ips: ["10.0.0.1", "fd00::1"] });
    assert.deepEqual(podToEndpoint(pod, nodeA, makeService(), "IPv6").addresses, ["fd00::1"]);
    assert.deepEqual(podToEndpoint(pod, nodeA, makeService(), "IPv4").addresses, ["10.0.0.1"]);
  });
});

describe("hostname", () => {
  const cases = [
    { name: "hostname and matching subdomain", o: { hostname: "h0", subdomain: "web" }, set: true },
    { name: "hostname, other subdomain", o: { hostname: "h0", subdomain: "other" }, set: false },
    { name: "hostname, no subdomain", o: { hostname: "h0" }, set: false },
    { name: "subdomain, no hostname", o: { subdomain: "web" }, set: false },
    { name: "other namespace", o: { hostname: "h0", subdomain: "web", namespace: "elsewhere" }, set: false },
  ];
  for (const c of cases) {
    test(c.name, () => {
      const pod = deepFreeze(makePod(0, c.o));
      const service = deepFreeze(makeService());
      assert.equal(shouldSetHostname(pod, service), c.set);
      const endpoint = podToEndpoint(pod, nodeA, service, "IPv4");
      assert.equal(endpoint.hostname, c.set ? "h0" : undefined);
    });
  }

  test("the hostname is part of the endpoint's identity, so adding it replaces the endpoint", () => {
    const first = run({ pods: [makePod(0)] });
    const plan = run({
      pods: [makePod(0, { hostname: "h0", subdomain: "web" })],
      existingSlices: deepFreeze(
        first.toCreate.map((s) => ({ ...s, metadata: { ...s.metadata, name: "web-1" } })),
      ),
    });
    assert.equal(plan.metrics.endpointsRemoved, 1);
    assert.equal(plan.metrics.endpointsAdded, 1);
  });
});
