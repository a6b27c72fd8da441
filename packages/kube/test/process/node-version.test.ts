// The start-up check of the programs' Node: the lower bound of engines.node, and one line naming both versions.
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { pathToFileURL } from "node:url";
import { oldNodeMessage, versionAtLeast } from "../../src/process/node-version.js";

test("versions compare part by part (doctor's Go check uses the same)", () => {
  assert.equal(versionAtLeast("1.26.8", "1.26.0"), true);
  assert.equal(versionAtLeast("1.26", "1.26.0"), true);
  assert.equal(versionAtLeast("1.25.10", "1.26.0"), false);
  assert.equal(versionAtLeast("1.100.0", "1.26.0"), true);
});

describe("oldNodeMessage", () => {
  test("an older Node gets one line with the program, the minimum, the range and the running version", () => {
    assert.equal(
      oldNodeMessage("switchyard-dns", "20.20.2", "^24.11.0"),
      'switchyard-dns: needs Node 24.11.0 or newer (package.json engines "^24.11.0"), this is Node 20.20.2',
    );
    assert.ok(oldNodeMessage("x", "24.10.9", ">=24.11.0"));
    assert.ok(oldNodeMessage("x", "24.11.0-pre", ">=24.11.1"));
  });

  test("the minimum itself and anything newer pass, a newer major too; no version in engines checks nothing", () => {
    assert.equal(oldNodeMessage("x", "24.11.0", "^24.11.0"), undefined);
    assert.equal(oldNodeMessage("x", "24.22.3", "^24.11.0"), undefined);
    assert.equal(oldNodeMessage("x", "26.0.0", "^24.11.0"), undefined);
    assert.equal(oldNodeMessage("x", "20.0.0", "*"), undefined);
  });
});

describe("exitOnOldNode", () => {
  test("a program whose package.json asks for a newer Node than this one stops with exit code 1", () => {
    const dir = mkdtempSync(join(tmpdir(), "sy-node-version-"));
    writeFileSync(join(dir, "package.json"), JSON.stringify({ engines: { node: ">=999.0.0" } }));
    const module = pathToFileURL(join(import.meta.dirname, "../../src/process/node-version.ts")).href;
    const manifest = pathToFileURL(join(dir, "package.json")).href;
    const script = `import { exitOnOldNode } from ${JSON.stringify(module)}; exitOnOldNode("prog", new URL(${JSON.stringify(manifest)})); console.log("ran");`;
    const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    assert.equal(r.status, 1);
    assert.equal(r.stdout, "");
    assert.match(r.stderr, /^prog: needs Node 999\.0\.0 or newer .*this is Node \d+\.\d+\.\d+\n$/);
    writeFileSync(join(dir, "package.json"), JSON.stringify({ engines: { node: ">=1.0.0" } }));
    assert.equal(
      execFileSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script], {
        encoding: "utf8",
      }),
      "ran\n",
    );
  });
});
