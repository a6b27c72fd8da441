import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { findImpurities, PURE_FOLDERS, runtimeImports } from "../scripts/check-pure-folders.mjs";

/** A repository of the given files (path → text) in a fresh folder. */
function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "sy-pure-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

test("runtimeImports keeps what runs and drops what the compiler erases", () => {
  const text = [
    'import type { Service } from "kubernetes-types/core/v1.js";',
    'import { type Clock } from "@switchyard/kube";',
    'import { a,\n  b,\n} from "./multi-line.js";',
    'export type { X } from "./types.js";',
    'export * from "./all.js";',
    'import "./side-effect.js";',
    'const m = await import("node:fs");',
  ].join("\n");
  assert.deepEqual(runtimeImports(text), [
    "@switchyard/kube",
    "./multi-line.js",
    "./all.js",
    "./side-effect.js",
    "node:fs",
  ]);
});

test("a pure folder that reaches I/O through a helper, an applier or a package is named with the chain", () => {
  const root = tree({
    "packages/p/src/render/a.ts": 'import { b } from "./b.js";\nimport type { R } from "../apply/run.js";\n',
    "packages/p/src/render/b.ts": 'import { c } from "../util/c.js";\nexport const b = c;\n',
    "packages/p/src/util/c.ts":
      'import { execFile } from "node:child_process";\nexport const c = execFile;\n',
    "packages/p/src/render/d.ts": 'export { run } from "../apply/run.js";\n',
    "packages/p/src/render/e.ts": 'import { type Clock } from "@scope/runtime";\n',
    "packages/p/src/render/f.ts": 'export const f = () => import("fs");\n',
    "packages/p/src/render/pure.ts":
      'import type { Service } from "kubernetes-types/core/v1.js";\nimport { createHash } from "node:crypto";\n',
    "packages/p/src/apply/run.ts": 'import { spawn } from "node:child_process";\nexport const run = spawn;\n',
  });
  assert.deepEqual(findImpurities(root, ["packages/p/src/render"]), [
    "packages/p/src/render/a.ts -> b.ts -> ../util/c.ts -> node:child_process (a Node module that does I/O)",
    "packages/p/src/render/b.ts -> ../util/c.ts -> node:child_process (a Node module that does I/O)",
    "packages/p/src/render/d.ts -> ../apply/run.js (an applier)",
    "packages/p/src/render/e.ts -> @scope/runtime (a package not known to be pure)",
    "packages/p/src/render/f.ts -> fs (a Node module that does I/O)",
  ]);
});

test("the proxier's renderer folders import nothing that does I/O", () => {
  assert.deepEqual(PURE_FOLDERS, [
    "packages/proxier/src/iptables",
    "packages/proxier/src/nftables",
    "packages/proxier/src/ipvs",
  ]);
  assert.deepEqual(findImpurities(join(import.meta.dirname, "..")), []);
});
