import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Pod, Service } from "kubernetes-types/core/v1.js";
import { TriggerTimes } from "../src/trigger-times.js";

const service: Service = {
  metadata: { name: "web", namespace: "ns", creationTimestamp: "2026-01-01T00:00:00Z" },
};
const pod = (name: string, readySince: string): Pod => ({
  metadata: { name },
  status: { conditions: [{ type: "Ready", status: "True", lastTransitionTime: readySince }] },
});

describe("TriggerTimes", () => {
  test("first sync: the earliest of the Service's creation and its Pods' transitions", () => {
    const t = new TriggerTimes();
    const at = t.compute("ns/web", service, [pod("a", "2026-01-01T00:00:05Z")]);
    assert.equal(at?.toISOString(), "2026-01-01T00:00:00.000Z");
  });

  test("later syncs: only what changed since the previous one", () => {
    const t = new TriggerTimes();
    t.compute("ns/web", service, [pod("a", "2026-01-01T00:00:05Z")]);
    assert.equal(t.compute("ns/web", service, [pod("a", "2026-01-01T00:00:05Z")]), undefined);
    const at = t.compute("ns/web", service, [
      pod("a", "2026-01-01T00:00:05Z"),
      pod("b", "2026-01-01T00:01:00Z"),
    ]);
    assert.equal(at?.toISOString(), "2026-01-01T00:01:00.000Z");
  });

  test("a forgotten Service starts over", () => {
    const t = new TriggerTimes();
    t.compute("ns/web", service, []);
    t.delete("ns/web");
    assert.equal(t.compute("ns/web", service, [])?.toISOString(), "2026-01-01T00:00:00.000Z");
  });
});
