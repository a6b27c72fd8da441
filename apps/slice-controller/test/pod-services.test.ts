import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Store } from "@switchyard/kube";
import type { Pod, Service } from "kubernetes-types/core/v1.js";
import { podEndpointChanged, servicesForPodUpdate, servicesSelecting } from "../src/pod-services.js";
import { selectorMatches } from "../src/selector.js";

const svc = (name: string, selector?: Record<string, string>, namespace = "ns"): Service => ({
  metadata: { name, namespace },
  spec: selector === undefined ? {} : { selector },
});

const pod = (labels: Record<string, string>, rv = "1", extra: Partial<Pod> = {}): Pod => ({
  metadata: { name: "p", namespace: "ns", labels, resourceVersion: rv },
  spec: { containers: [], nodeName: "n1" },
  status: { podIP: "10.0.0.1", conditions: [{ type: "Ready", status: "True" }] },
  ...extra,
});

function services(): Store<Service> {
  const store = new Store<Service>();
  for (const s of [
    svc("web", { app: "web" }),
    svc("web-v2", { app: "web", track: "v2" }),
    svc("db", { app: "db" }),
    svc("manual"),
    svc("elsewhere", { app: "web" }, "other"),
  ])
    store.upsert(s);
  return store;
}

describe("selectorMatches", () => {
  test("every key must match; an empty selector selects every Pod, as upstream", () => {
    assert.equal(selectorMatches({ app: "web" }, { app: "web", x: "y" }), true);
    assert.equal(selectorMatches({ app: "web", track: "v2" }, { app: "web" }), false);
    assert.equal(selectorMatches({}, { app: "web" }), true);
    assert.equal(selectorMatches({}, undefined), true);
    assert.equal(selectorMatches({ app: "web" }, undefined), false);
  });
});

describe("Services a Pod change syncs", () => {
  test("only selector Services in the Pod's namespace that select it", () => {
    assert.deepEqual(servicesSelecting(services(), pod({ app: "web" })).sort(), ["ns/web"]);
    assert.deepEqual(servicesSelecting(services(), pod({ app: "web", track: "v2" })).sort(), [
      "ns/web",
      "ns/web-v2",
    ]);
  });

  test("a Service with an empty selector selects every Pod of its namespace; one without a selector none", () => {
    const store = services();
    store.upsert(svc("empty", {}));
    assert.deepEqual(servicesSelecting(store, pod({ app: "db" })).sort(), ["ns/db", "ns/empty"]);
    assert.deepEqual(servicesSelecting(store, pod({})).sort(), ["ns/empty"]);
  });

  test("a label change syncs the Services of both the old and the new labels", () => {
    const keys = servicesForPodUpdate(services(), pod({ app: "web" }, "1"), pod({ app: "db" }, "2"));
    assert.deepEqual(keys.sort(), ["ns/db", "ns/web"]);
  });

  test("a resync of the same version, or a status write no endpoint shows, syncs nothing", () => {
    const p = pod({ app: "web" });
    assert.deepEqual(servicesForPodUpdate(services(), p, p), []);
    const heartbeat = pod({ app: "web" }, "2", {
      status: {
        ...p.status,
        conditions: [...(p.status?.conditions ?? []), { type: "PodScheduled", status: "True" }],
      },
    });
    assert.deepEqual(servicesForPodUpdate(services(), p, heartbeat), []);
  });

  test("readiness, IPs, deletion and node changes are endpoint changes", () => {
    const p = pod({ app: "web" });
    const changes: Pod[] = [
      pod({ app: "web" }, "2", { status: { ...p.status, conditions: [{ type: "Ready", status: "False" }] } }),
      pod({ app: "web" }, "2", { status: { ...p.status, podIP: "10.0.0.2" } }),
      { ...p, metadata: { ...p.metadata, resourceVersion: "2", deletionTimestamp: "2026-01-01T00:00:00Z" } },
      pod({ app: "web" }, "2", { spec: { containers: [], nodeName: "n2" } }),
    ];
    for (const changed of changes) {
      assert.equal(podEndpointChanged(p, changed), true);
      assert.deepEqual(servicesForPodUpdate(services(), p, changed), ["ns/web"]);
    }
  });
});
