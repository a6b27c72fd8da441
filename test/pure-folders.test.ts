import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { test } from "node:test";
import { readImports } from "../scripts/check-package-graph.mjs";
import {
  findImpurities,
  findPluginCrossings,
  PURE_FOLDERS,
  runtimeImports,
} from "../scripts/check-pure-folders.mjs";

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
    "packages/proxier/src/ebpf",
    "packages/proxier/src/ipvs",
    "packages/basics/src",
  ]);
  assert.deepEqual(findImpurities(join(import.meta.dirname, "..")), []);
});

test("the plugin rule reads type-only imports too", () => {
  const text =
    'import type { A } from "./a.js";\nexport type { B } from "./b.js";\nimport { c } from "./c.js";\n';
  assert.deepEqual(
    readImports(text).map((i) => i.specifier),
    ["./a.js", "./b.js", "./c.js"],
  );
});

test("a plugin importing another plugin, or the framework importing a plugin, is one line each", () => {
  const root = tree({
    "pkg/src/plugins/acl/acl.ts":
      'import { edeOpt } from "../template/handler.js";\nimport { rules } from "./rules.js";\n',
    "pkg/src/plugins/acl/rules.ts": 'import type { Upstream } from "../kubernetes/answer.js";\n',
    "pkg/src/plugins/template/handler.ts": 'import { edeOpt } from "../../plugin/pkg/ede.js";\n',
    "pkg/src/plugins/health/health.ts": 'import { listenHttp } from "../http-endpoint.js";\n',
    "pkg/src/plugins/kubernetes/answer.ts": 'import { parseGoIP } from "../hosts/go-ip.js";\n',
    "pkg/src/plugin/cidr.ts": 'import { parseGoIP } from "../plugins/hosts/go-ip.js";\n',
    "pkg/src/plugin/pkg/ede.ts": 'import type { Message } from "../../wire/message.js";\n',
    "pkg/src/server/dispatch.ts": 'import { CacheHandler } from "../plugins/cache/handler.js";\n',
    "pkg/src/registry.ts": 'import { setupAcl } from "./plugins/acl/acl.js";\n',
  });
  const rules = { src: "pkg/src", plugins: "plugins", assembly: ["registry.ts"] };
  const pending = [
    "pkg/src/plugins/kubernetes/answer.ts -> ../hosts/go-ip.js",
    "pkg/src/plugins/bind/bind.ts -> ../hosts/go-ip.js",
  ];
  const another = "a plugin imports another plugin; what both need goes in src/plugin/pkg/";
  assert.deepEqual(findPluginCrossings(root, rules, pending).sort(), [
    "pkg/src/plugin/cidr.ts -> ../plugins/hosts/go-ip.js (a plugin may be imported only by registry.ts)",
    `pkg/src/plugins/acl/acl.ts -> ../template/handler.js (${another})`,
    `pkg/src/plugins/acl/rules.ts -> ../kubernetes/answer.js (${another})`,
    "pkg/src/plugins/bind/bind.ts -> ../hosts/go-ip.js (no longer imported: take it off PENDING_CROSSINGS in scripts/check-pure-folders.mjs)",
    `pkg/src/plugins/health/health.ts -> ../http-endpoint.js (${another})`,
    "pkg/src/server/dispatch.ts -> ../plugins/cache/handler.js (a plugin may be imported only by registry.ts)",
  ]);
});

test("the resolver's plugins import no other plugin, and only its registry and index import them", () => {
  assert.deepEqual(findPluginCrossings(join(import.meta.dirname, "..")), []);
});
