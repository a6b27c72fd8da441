import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import {
  checkPackageGraph,
  findCycle,
  readImports,
  readPackageGraph,
} from "../scripts/check-package-graph.mjs";

const graphOf = (edges: Record<string, string[]>) => new Map(Object.entries(edges));

/** A manifest of a workspace package: its name and dependency fields. */
const manifest = (name: string, fields: Record<string, unknown> = {}) =>
  JSON.stringify({
    name,
    exports: { ".": "./dist/index.js", "./testing": "./dist/testing/index.js" },
    ...fields,
  });

/**
 * A repository of the given files (path → text) in a fresh folder: a root package whose workspaces are
 * packages/*, and packages a (depends on b) and b (depends on nothing), unless the files say otherwise.
 */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "sy-graph-"));
  const all = {
    "package.json": JSON.stringify({ name: "root", private: true, workspaces: ["packages/*"] }),
    "packages/a/package.json": manifest("@switchyard/a", { dependencies: { "@switchyard/b": "*" } }),
    "packages/b/package.json": manifest("@switchyard/b"),
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/** The violations of a repository, as the lines the check prints. */
const violations = (files: Record<string, string>) =>
  checkPackageGraph(tree(files)).violations.map((v) => v.message);

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

test("readImports reads every form of import, and no comment or string that names a module", () => {
  const text = [
    "// a comment naming @switchyard/kube/testing",
    '/* import { x } from "@switchyard/in-a-block-comment"; */',
    'import type { Service } from "kubernetes-types/core/v1.js";',
    'import { a,\n  b,\n} from "./multi-line.js";',
    'export type { X } from "./types.js";',
    'export * from "./all.js";',
    'import "./side-effect.js";',
    'const m = await import("node:fs");',
    "const n = await import(`./template.js`);",
    "const dynamic = await import(name);",
    'type T = typeof import("./type-query.js");',
    'const text = "import { y } from \\"@switchyard/in-a-string\\"";',
    'const code = `export * from "@switchyard/in-a-template"`;',
  ].join("\n");
  assert.deepEqual(readImports(text, "module.ts"), [
    { specifier: "kubernetes-types/core/v1.js", line: 3 },
    { specifier: "./multi-line.js", line: 6 },
    { specifier: "./types.js", line: 7 },
    { specifier: "./all.js", line: 8 },
    { specifier: "./side-effect.js", line: 9 },
    { specifier: "node:fs", line: 10 },
    { specifier: "./template.js", line: 11 },
    { specifier: "./type-query.js", line: 13 },
  ]);
  assert.deepEqual(readImports('import { h } from "preact";\nexport const v = <div />;\n', "page.tsx"), [
    { specifier: "preact", line: 1 },
  ]);
});

test("production code imports only what dependencies declare; tests may use devDependencies too", () => {
  const b = manifest("@switchyard/b", { devDependencies: { "@switchyard/c": "*" } });
  const files = {
    "packages/b/package.json": b,
    "packages/c/package.json": manifest("@switchyard/c"),
    "packages/b/src/run.ts": 'import { c } from "@switchyard/c";\n',
    "packages/b/bin/b.js": 'import "@switchyard/c";\n',
    "packages/b/src/types.ts": 'import type { C } from "@switchyard/c";\n',
    "packages/b/test/run.test.ts": 'import { c } from "@switchyard/c";\nimport { d } from "@switchyard/d";\n',
    "packages/b/src/run.test.ts": 'import { c } from "@switchyard/c";\n',
    "packages/b/src/fixtures/one.ts": 'import { c } from "@switchyard/c";\n',
    "packages/d/package.json": manifest("@switchyard/d"),
  };
  const only = "which packages/b/package.json has only in devDependencies while production code runs with";
  assert.deepEqual(violations(files), [
    `packages/b/bin/b.js:1 imports @switchyard/c, ${only} dependencies: move it to dependencies`,
    `packages/b/src/run.ts:1 imports @switchyard/c, ${only} dependencies: move it to dependencies`,
    `packages/b/src/types.ts:1 imports @switchyard/c, ${only} dependencies: move it to dependencies`,
    "packages/b/test/run.test.ts:2 imports @switchyard/d, which packages/b/package.json does not declare: add it to devDependencies",
  ]);
  const declared = manifest("@switchyard/b", {
    dependencies: { "@switchyard/c": "*" },
    devDependencies: { "@switchyard/d": "*" },
  });
  assert.deepEqual(violations({ ...files, "packages/b/package.json": declared }), []);
});

test("the root's bench, test and scripts import any workspace by name, declared or not", () => {
  assert.deepEqual(
    violations({
      "bench/x.bench.ts": 'import { a } from "@switchyard/a";\n',
      "test/x.test.ts": 'import { b } from "@switchyard/b/testing";\nimport { s } from "../scripts/s.mjs";\n',
      "scripts/s.mjs": 'export { a } from "@switchyard/a";\n',
    }),
    [],
  );
});

test("a subpath the package's exports do not name is a deep import", () => {
  const files = {
    "packages/b/package.json": manifest("@switchyard/b", {
      exports: { ".": "./i.js", "./parts/*": "./p/*.js" },
    }),
    "packages/a/src/deep.ts": 'import { x } from "@switchyard/b/dist/render.js";\n',
    "test/deep.test.ts": 'import { y } from "@switchyard/b/src/render.ts";\n',
    "packages/a/src/fine.ts":
      'import { b } from "@switchyard/b";\nimport { p } from "@switchyard/b/parts/one";\n',
  };
  const not = "a subpath packages/b/package.json's exports do not name (it exports ., ./parts/*)";
  assert.deepEqual(violations(files), [
    `packages/a/src/deep.ts:1 imports @switchyard/b/dist/render.js, ${not}: import an entry it exports, or export what is needed`,
    `test/deep.test.ts:1 imports @switchyard/b/src/render.ts, ${not}: import an entry it exports, or export what is needed`,
  ]);
});

test("no relative import leaves its workspace, nor reaches from the root's folders into one", () => {
  const files = {
    "packages/a/src/x.ts": 'import { y } from "../../b/src/y.js";\nimport { z } from "./z.js";\n',
    "packages/a/test/x.test.ts":
      'import { h } from "../../../scripts/helper.mjs";\nimport { x } from "../src/x.js";\n',
    "test/x.test.ts":
      'import { n } from "../packages/b/test/netns.js";\nimport { h } from "../scripts/helper.mjs";\n',
  };
  const intoB =
    "a path into @switchyard/b's files (packages/b/): import it by name, through an entry @switchyard/b's exports name";
  assert.deepEqual(violations(files), [
    `packages/a/src/x.ts:1 imports ../../b/src/y.js, ${intoB}`,
    "packages/a/test/x.test.ts:1 imports ../../../scripts/helper.mjs, a path into the root package's files: move what it needs into this workspace or a package it may import",
    `test/x.test.ts:1 imports ../packages/b/test/netns.js, ${intoB}`,
  ]);
});

test("production code never imports a testing entry; tests and testing entries may", () => {
  const b = manifest("@switchyard/b", { dependencies: { "@switchyard/c": "*" } });
  const files = {
    "packages/b/package.json": b,
    "packages/c/package.json": manifest("@switchyard/c"),
    "packages/b/src/explain.ts": 'import type { Trace } from "@switchyard/c/testing";\n',
    "packages/b/src/index.ts": 'export * from "./testing/index.js";\n',
    "packages/b/src/testing/index.ts":
      'export { FakeC } from "@switchyard/c/testing";\nexport * from "../index.js";\n',
    "packages/b/test/explain.test.ts": 'import { FakeC } from "@switchyard/c/testing";\n',
  };
  assert.deepEqual(violations(files), [
    "packages/b/src/explain.ts:1 imports @switchyard/c/testing, a testing entry, from production code: test doubles stay in tests; import @switchyard/c's production entry, or give c one for what is needed",
    "packages/b/src/index.ts:1 imports ./testing/index.js, the testing entry, from production code: move what production needs out of src/testing",
  ]);
});

test("an import that closes a cycle the manifests do not show fails, tests and paths included", () => {
  const files = {
    "packages/b/test/uses-a.test.ts": 'import { a } from "@switchyard/a/testing";\n',
    "packages/b/test/by-path.ts": 'import { a } from "../../a/src/a.js";\n',
  };
  const cycle =
    "but a -> b already: a cycle; move what it needs to a package below both (a -> b: a dependency field)";
  assert.deepEqual(violations(files), [
    `packages/b/test/by-path.ts:1 imports ../../a/src/a.js, ${cycle}`,
    `packages/b/test/uses-a.test.ts:1 imports @switchyard/a/testing, ${cycle}`,
  ]);
  // Declared, the same edge is a cycle of the manifests, named once.
  const declared = manifest("@switchyard/b", { devDependencies: { "@switchyard/a": "*" } });
  assert.deepEqual(violations({ "packages/b/package.json": declared }), [
    "packages/a/package.json: the dependency fields make a cycle a -> b -> a: drop one edge",
  ]);
  // The same import from a package a does not reach is no cycle.
  assert.deepEqual(
    violations({
      "packages/c/package.json": manifest("@switchyard/c", { devDependencies: { "@switchyard/a": "*" } }),
      "packages/c/test/uses-a.test.ts": 'import { a } from "@switchyard/a/testing";\n',
    }),
    [],
  );
});

test("the repository's own packages form no cycle in their manifests", () => {
  const graph = readPackageGraph(join(import.meta.dirname, ".."));
  assert.ok(graph.has("@switchyard/kube"), "the graph holds the workspace packages");
  assert.ok(graph.has("@switchyard/lab"), "lab, a workspace of its own, is read too");
  assert.deepEqual(graph.get("@switchyard/basics"), [], "basics depends on no workspace package");
  assert.deepEqual(
    graph.get("@switchyard/kube"),
    ["@switchyard/basics"],
    "kube, the shared runtime, depends on no workspace package but basics",
  );
  assert.equal(findCycle(graph), undefined);
});

test("the repository's imports break no rule", () => {
  const { imports, violations } = checkPackageGraph(join(import.meta.dirname, ".."));
  assert.ok(imports > 1000, `read ${imports} imports`);
  assert.deepEqual(
    violations.map((v) => v.message),
    [],
  );
});
