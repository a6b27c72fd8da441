// What a public package's prepack (scripts/prepack.mjs) removes from dist/ before packing: tsc's outputs whose
// source is gone, and nothing else.
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { test } from "node:test";
import { staleOutputs } from "../scripts/prepack.mjs";

test("outputs of a deleted source are stale; outputs of a live .ts or .tsx source and other files are not", () => {
  const pkg = mkdtempSync(join(tmpdir(), "sy-prepack-"));
  const files = {
    "src/a.ts": "",
    "src/sub/b.tsx": "",
    "dist/a.js": "",
    "dist/a.js.map": "",
    "dist/a.d.ts": "",
    "dist/a.d.ts.map": "",
    "dist/sub/b.js": "",
    "dist/gone.js": "",
    "dist/gone.js.map": "",
    "dist/sub/gone.d.ts": "",
    "dist/sub/gone.d.ts.map": "",
    "dist/ebpf/prog.bpf.o": "",
    "dist/data.json": "",
  };
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(pkg, path, ".."), { recursive: true });
    writeFileSync(join(pkg, path), text);
  }
  const stale = staleOutputs(join(pkg, "dist"), join(pkg, "src")).map((f) => relative(pkg, f));
  assert.deepEqual(stale.sort(), [
    "dist/gone.js",
    "dist/gone.js.map",
    "dist/sub/gone.d.ts",
    "dist/sub/gone.d.ts.map",
  ]);
  assert.deepEqual(staleOutputs(join(pkg, "no-dist"), join(pkg, "src")), []);
});
