import assert from "node:assert/strict";
import { describe, test } from "node:test";
import type { Endpoints } from "kubernetes-types/core/v1.js";
import {
  ANNOTATION_LAST_CHANGE_TRIGGER_TIME,
  ANNOTATION_LEADER_ELECTION,
  type EndpointSlice,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  LABEL_SKIP_MIRROR,
  MIRRORING_CONTROLLER_NAME,
  mirrorEndpoints,
  shouldMirror,
} from "../src/index.js";
import { deepFreeze, makeService } from "./fixtures.js";

function makeEndpoints(
  ready: string[],
  notReady: string[] = [],
  extra: Partial<Endpoints["metadata"]> = {},
): Endpoints {
  return {
    metadata: { name: "ext", namespace: "ns", uid: "eps-uid", labels: { team: "blue" }, ...extra },
    subsets: [
      {
        addresses: ready.map((ip) => ({ ip })),
        notReadyAddresses: notReady.map((ip) => ({ ip })),
        ports: [{ name: "http", port: 80, protocol: "TCP" }],
      },
    ],
  };
}

const named = (plan: ReturnType<typeof mirrorEndpoints>, prefix = "ext-m"): EndpointSlice[] =>
  deepFreeze(plan.toCreate.map((s, i) => ({ ...s, metadata: { ...s.metadata, name: `${prefix}${i}` } })));

describe("mirroring", () => {
  test("only selectorless Services, without skip-mirror or leader-election markers", () => {
    const selectorless = makeService();
    delete selectorless.spec?.selector;
    assert.equal(shouldMirror(makeEndpoints([]), selectorless), true);
    assert.equal(shouldMirror(makeEndpoints([]), makeService()), false);
    assert.equal(shouldMirror(makeEndpoints([]), undefined), false);
    assert.equal(
      shouldMirror(makeEndpoints([], [], { labels: { [LABEL_SKIP_MIRROR]: "true" } }), selectorless),
      false,
    );
    assert.equal(
      shouldMirror(
        makeEndpoints([], [], { annotations: { [ANNOTATION_LEADER_ELECTION]: "{}" } }),
        selectorless,
      ),
      false,
    );
  });

  test("addresses become endpoints per family, with the Endpoints' labels and annotations", () => {
    const endpoints = makeEndpoints(["10.1.0.1", "fd00::1"], ["10.1.0.2"], {
      annotations: { note: "x", [ANNOTATION_LAST_CHANGE_TRIGGER_TIME]: "2026-01-01T00:00:00Z" },
    });
    const plan = mirrorEndpoints(deepFreeze({ endpoints, existingSlices: [] }));
    assert.deepEqual(
      plan.toCreate.map((s) => [
        s.addressType,
        s.endpoints.map((e) => [e.addresses[0], e.conditions?.ready]),
      ]),
      [
        [
          "IPv4",
          [
            ["10.1.0.1", true],
            ["10.1.0.2", false],
          ],
        ],
        ["IPv6", [["fd00::1", true]]],
      ],
    );
    const [slice] = plan.toCreate;
    assert.deepEqual(slice?.metadata?.labels, {
      team: "blue",
      [LABEL_SERVICE_NAME]: "ext",
      [LABEL_MANAGED_BY]: MIRRORING_CONTROLLER_NAME,
    });
    assert.deepEqual(slice?.metadata?.annotations, { note: "x" });
    assert.equal(slice?.metadata?.ownerReferences?.[0]?.kind, "Endpoints");
    assert.deepEqual(plan.metrics, { added: 3, updated: 0, removed: 0, addressesSkipped: 0 });
  });

  test("a second sync of the same Endpoints writes nothing; a change rewrites the slice in place", () => {
    const endpoints = makeEndpoints(["10.1.0.1", "10.1.0.2"]);
    const existing = named(mirrorEndpoints({ endpoints, existingSlices: [] }));
    const again = mirrorEndpoints(deepFreeze({ endpoints, existingSlices: existing }));
    assert.deepEqual([again.toCreate.length, again.toUpdate.length, again.toDelete.length], [0, 0, 0]);
    const changed = mirrorEndpoints(
      deepFreeze({ endpoints: makeEndpoints(["10.1.0.1"], ["10.1.0.2"]), existingSlices: existing }),
    );
    assert.deepEqual(
      changed.toUpdate.map((s) => s.metadata?.name),
      ["ext-m0"],
    );
    assert.deepEqual(changed.metrics, { added: 0, updated: 1, removed: 0, addressesSkipped: 0 });
  });

  test("addresses beyond the per-subset maximum and invalid IPs are skipped with events", () => {
    const plan = mirrorEndpoints(
      deepFreeze({
        endpoints: makeEndpoints(["10.1.0.1", "bogus", "10.1.0.2", "10.1.0.3"]),
        existingSlices: [],
        maxEndpointsPerSubset: 2,
      }),
    );
    assert.equal(plan.toCreate[0]?.endpoints.length, 2);
    assert.equal(plan.metrics.addressesSkipped, 2);
    assert.deepEqual(plan.events, [
      {
        type: "Warning",
        reason: "InvalidIPAddress",
        message: "Skipped 1 invalid IP addresses when mirroring to EndpointSlices",
      },
      {
        type: "Warning",
        reason: "TooManyAddressesToMirror",
        message:
          "A max of 2 addresses can be mirrored to EndpointSlices per Endpoints subset. 2 addresses were skipped",
      },
    ]);
  });

  test("a changed port set recycles the old slice's name instead of create plus delete", () => {
    const existing = named(mirrorEndpoints({ endpoints: makeEndpoints(["10.1.0.1"]), existingSlices: [] }));
    const moved = makeEndpoints(["10.1.0.1"]);
    const subset = moved.subsets?.[0];
    if (subset) subset.ports = [{ name: "http", port: 8080, protocol: "TCP" }];
    const plan = mirrorEndpoints(deepFreeze({ endpoints: moved, existingSlices: existing }));
    assert.deepEqual([plan.toCreate.length, plan.toDelete.length], [0, 0]);
    assert.deepEqual(
      plan.toUpdate.map((s) => [s.metadata?.name, s.ports?.[0]?.port]),
      [["ext-m0", 8080]],
    );
  });
});
