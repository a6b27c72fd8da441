import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { CONTROLLER_NAME, finalize, newEndpointSlice } from "../src/index.js";
import { deepFreeze, expectedEndpoint, makeService, makeSlice } from "./fixtures.js";

const service = makeService();
const fresh = (addressType: "IPv4" | "IPv6" = "IPv4") =>
  newEndpointSlice(service, [], addressType, CONTROLLER_NAME);
const summary = (ops: ReturnType<typeof finalize>["operations"]) =>
  ops.map((o) => `${o.verb} ${o.slice.metadata?.name ?? "<new>"} ${o.slice.addressType}`);

describe("finalize", () => {
  test("a create and a delete of the same family become an update reusing the old name", () => {
    const plan = deepFreeze({ service, toCreate: [fresh()], toUpdate: [], toDelete: [makeSlice("old", [])] });
    const result = finalize(plan);
    assert.deepEqual(summary(result.operations), ["update old IPv4"]);
    assert.deepEqual(result.changes, { create: 0, update: 1, delete: 0 });
    assert.equal(result.slicesChanged, 1);
  });

  test("slices of another family or another owner are not reused", () => {
    const foreign = makeSlice("foreign", [], { service: makeService({ uid: "old-uid" }) });
    const v6 = makeSlice("v6", [], { addressType: "IPv6" });
    const plan = deepFreeze({ service, toCreate: [fresh()], toUpdate: [], toDelete: [foreign, v6] });
    assert.deepEqual(summary(finalize(plan).operations), [
      "create <new> IPv4",
      "delete foreign IPv4",
      "delete v6 IPv6",
    ]);
  });

  test("operations are ordered creates, updates, deletes", () => {
    const plan = deepFreeze({
      service,
      toCreate: [fresh(), fresh()],
      toUpdate: [makeSlice("u", [expectedEndpoint(0)])],
      toDelete: [makeSlice("d", [], { addressType: "IPv6" })],
    });
    assert.deepEqual(
      finalize(plan).operations.map((o) => o.verb),
      ["create", "create", "update", "delete"],
    );
  });

  test("creates are skipped for a deleting Service, merged updates still happen", () => {
    const deleting = makeService({ deletionTimestamp: "2026-01-01T00:00:00Z" });
    const plan = deepFreeze({
      service: deleting,
      toCreate: [fresh(), fresh()],
      toUpdate: [],
      toDelete: [makeSlice("old", [])],
    });
    const result = finalize(plan);
    assert.deepEqual(summary(result.operations), ["update old IPv4"]);
    assert.equal(result.slicesChanged, 2);
  });

  test("creates are skipped in a terminating namespace", () => {
    const plan = deepFreeze({ service, toCreate: [fresh()], toUpdate: [makeSlice("u", [])], toDelete: [] });
    assert.deepEqual(summary(finalize(plan, { namespaceTerminating: true }).operations), ["update u IPv4"]);
  });
});
