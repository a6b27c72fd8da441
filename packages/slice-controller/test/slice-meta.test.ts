import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  CONTROLLER_NAME,
  formatRFC3339Nano,
  LABEL_HEADLESS,
  LABEL_MANAGED_BY,
  LABEL_SERVICE_NAME,
  sliceLabels,
  sliceNamePrefix,
} from "../src/index.js";
import { makePod, makeService, makeSlice } from "./fixtures.js";
import { run } from "./reconcile-helpers.js";

describe("labels", () => {
  test("Service labels are copied, reserved keys replaced by the controller's own", () => {
    const service = makeService({
      labels: {
        team: "blue",
        [LABEL_SERVICE_NAME]: "spoof",
        [LABEL_MANAGED_BY]: "me",
        [LABEL_HEADLESS]: "x",
      },
    });
    const created = run({ service, pods: [makePod(0)] }).toCreate[0];
    assert.deepEqual(created?.metadata?.labels, {
      team: "blue",
      [LABEL_SERVICE_NAME]: "web",
      [LABEL_MANAGED_BY]: CONTROLLER_NAME,
    });
  });

  test("a headless Service adds service.kubernetes.io/headless", () => {
    const { labels } = sliceLabels(undefined, makeService({ clusterIP: "None" }), CONTROLLER_NAME);
    assert.equal(labels[LABEL_HEADLESS], "");
  });

  test("only non-reserved labels count as drift", () => {
    const slice = makeSlice("s", [], {
      labels: { [LABEL_SERVICE_NAME]: "web", [LABEL_MANAGED_BY]: CONTROLLER_NAME },
    });
    assert.equal(sliceLabels(slice, makeService({ clusterIP: "None" }), CONTROLLER_NAME).changed, false);
    assert.equal(sliceLabels(slice, makeService({ labels: { a: "1" } }), CONTROLLER_NAME).changed, true);
  });
});

describe("slice metadata", () => {
  test("generateName, namespace, address type and controller owner reference", () => {
    const created = run({ pods: [makePod(0)] }).toCreate[0];
    assert.equal(created?.metadata?.generateName, "web-");
    assert.equal(created?.metadata?.namespace, "ns");
    assert.equal(created?.metadata?.name, undefined);
    assert.equal(created?.addressType, "IPv4");
    assert.deepEqual(created?.metadata?.ownerReferences, [
      {
        apiVersion: "v1",
        kind: "Service",
        name: "web",
        uid: "svc-uid",
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
  });

  test("name prefix falls back to the bare name when the dash form is not a valid prefix", () => {
    assert.equal(sliceNamePrefix("web"), "web-");
    const long = "x".repeat(252);
    assert.equal(sliceNamePrefix(long), long);
  });

  test("RFC3339Nano trims trailing zeros", () => {
    assert.equal(formatRFC3339Nano(new Date("2026-01-02T03:04:05.000Z")), "2026-01-02T03:04:05Z");
    assert.equal(formatRFC3339Nano(new Date("2026-01-02T03:04:05.100Z")), "2026-01-02T03:04:05.1Z");
  });
});
