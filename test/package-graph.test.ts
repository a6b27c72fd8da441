import assert from "node:assert/strict";
import { join } from "node:path";
import { test } from "node:test";
import { findCycle, readPackageGraph } from "../scripts/check-package-graph.mjs";

const graphOf = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

test("findCycle names the packages of a cycle, closing it where it started", () => {
  const cycle = findCycle(
    graphOf({
      "@switchyard/app": ["@switchyard/kube", "@switchyard/lab"],
      "@switchyard/kube": [],
      "@switchyard/lab": ["@switchyard/resolver"],
      "@switchyard/resolver": ["@switchyard/lab"],
    }),
  );
  assert.deepEqual(cycle, ["@switchyard/lab", "@switchyard/resolver", "@switchyard/lab"]);
  assert.deepEqual(findCycle(graphOf({ "@switchyard/kube": ["@switchyard/kube"] })), [
    "@switchyard/kube",
    "@switchyard/kube",
  ]);
});

test("findCycle finds none in a graph where two packages share a dependency", () => {
  const diamond = graphOf({
    "@switchyard/app": ["@switchyard/proxier", "@switchyard/resolver"],
    "@switchyard/proxier": ["@switchyard/kube"],
    "@switchyard/resolver": ["@switchyard/kube"],
    "@switchyard/kube": [],
  });
  assert.equal(findCycle(diamond), undefined);
});

test("the repository's own workspace packages form no cycle", () => {
  const graph = readPackageGraph(join(import.meta.dirname, ".."));
  assert.ok(graph.has("@switchyard/kube"), "the graph holds the workspace packages");
  assert.ok(graph.has("@switchyard/lab"), "lab, a workspace of its own, is read too");
  assert.deepEqual(
    graph.get("@switchyard/kube"),
    [],
    "kube, the shared runtime, depends on no workspace package",
  );
  assert.equal(findCycle(graph), undefined);
});
