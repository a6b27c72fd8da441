// When `up` counts a node as ready for pods: the Ready condition, and no node.kubernetes.io taint that keeps pods off.
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Node, Taint } from "kubernetes-types/core/v1.js";
import { acceptsPods } from "../../src/netns/node-readiness.js";

const node = (ready: "True" | "False" | "Unknown", taints: Taint[] | null): Node => ({
  metadata: { name: "node-1" },
  // As the apiserver sends them: a node without taints comes with none at all, or null from some clients.
  spec: taints === null ? {} : { taints },
  status: { conditions: [{ type: "Ready", status: ready }] },
});
const notReady = (effect: string): Taint => ({ key: "node.kubernetes.io/not-ready", effect });

test("a Ready node with no taints, or only the not-ready NoExecute taint every pod tolerates, accepts pods", () => {
  assert.equal(acceptsPods(node("True", null)), true);
  assert.equal(acceptsPods(node("True", [notReady("NoExecute")])), true);
});

test("a node that is not Ready, or still carries a node.kubernetes.io NoSchedule taint, does not", () => {
  assert.equal(acceptsPods(node("False", null)), false);
  assert.equal(acceptsPods(node("Unknown", null)), false);
  assert.equal(acceptsPods(node("True", [notReady("NoSchedule")])), false);
  assert.equal(
    acceptsPods(node("True", [{ key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" }])),
    false,
  );
});

test("a user's own taint is the user's business: it does not hold up the lab", () => {
  assert.equal(acceptsPods(node("True", [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }])), true);
});
