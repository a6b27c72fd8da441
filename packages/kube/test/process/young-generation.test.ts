// When a command starts itself again with a small young generation, and that it really does: a child node process
// that calls restartWithSmallYoungGeneration reports the flag in its execArgv, its pid unchanged, and V8's
// new-space capacity at most what the flag allows.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { join } from "node:path";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { YOUNG_GENERATION_FLAG, youngGenerationRestart } from "../../src/process/young-generation.js";

const base = {
  execArgv: [],
  argv: ["/usr/bin/node", "/app/bin/x.js", "--v=2"],
  env: {},
  keepVariable: "X_NODE_FLAGS",
};

describe("youngGenerationRestart", () => {
  test("restarts with the flag before node's own arguments and the command's", () => {
    assert.deepEqual(youngGenerationRestart({ ...base, execArgv: ["--enable-source-maps"] }), [
      "/usr/bin/node",
      YOUNG_GENERATION_FLAG,
      "--enable-source-maps",
      "/app/bin/x.js",
      "--v=2",
    ]);
  });

  test("a size the user chose wins, on node's command line or in NODE_OPTIONS; so does the keep variable", () => {
    assert.equal(youngGenerationRestart({ ...base, execArgv: ["--max-semi-space-size=8"] }), undefined);
    assert.equal(
      youngGenerationRestart({ ...base, env: { NODE_OPTIONS: "--max-heap-size=200" } }),
      undefined,
    );
    assert.equal(youngGenerationRestart({ ...base, env: { X_NODE_FLAGS: "keep" } }), undefined);
    // Once restarted, the flag is there: no second restart.
    assert.equal(youngGenerationRestart({ ...base, execArgv: [YOUNG_GENERATION_FLAG] }), undefined);
  });
});

test("a real node process starts itself again once, with the flag and the same pid", () => {
  const module = pathToFileURL(join(import.meta.dirname, "../../src/process/young-generation.ts")).href;
  const script = [
    `const { restartWithSmallYoungGeneration } = await import(${JSON.stringify(module)});`,
    "const pid = process.env.FIRST_PID ?? String(process.pid);",
    "process.env.FIRST_PID = pid;",
    'restartWithSmallYoungGeneration("X_NODE_FLAGS");',
    'const v8 = await import("node:v8");',
    'const newSpace = v8.getHeapSpaceStatistics().find((s) => s.space_name === "new_space");',
    "console.log(JSON.stringify({ execArgv: process.execArgv, same: pid === String(process.pid), newSpace: newSpace?.space_size }));",
  ].join("\n");
  const out = execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
    encoding: "utf8",
    env: { ...process.env, NODE_OPTIONS: "" },
  });
  const r = JSON.parse(out.trim().split("\n").at(-1) ?? "{}");
  assert.ok(r.execArgv.includes(YOUNG_GENERATION_FLAG), out);
  assert.equal(r.same, true, "execve keeps the pid");
  // Two semi-spaces of at most 2 MiB each.
  assert.ok(r.newSpace <= 4 * 1024 * 1024, `new space ${r.newSpace}`);
});
