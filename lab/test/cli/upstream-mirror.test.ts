// `switchyard-lab upstream mirror` as an instructor runs it: a process serving this machine's binaries, and
// another machine's `upstream build` (here: buildUpstream into an empty cache) filling its cache from it with the
// variables the command printed. The binaries are small scripts; packages/testbed's release-mirror test does the
// same with the real ones.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { binarySpecs, buildUpstream } from "@switchyard/testbed/upstream";
import { labEntry } from "../../src/self.js";

test("upstream mirror serves the binaries it has; upstream build elsewhere downloads them all from it", async () => {
  const dir = mkdtempSync(join(tmpdir(), "sy-mirror-cmd-"));
  const bin = join(dir, "bin");
  mkdirSync(bin);
  for (const s of binarySpecs)
    writeFileSync(join(bin, s.name), `#!/bin/sh\necho ${s.name}\n`, { mode: 0o755 });
  const [node = process.execPath, ...entry] = labEntry("cli/bin");
  const child = spawn(node, [...entry, "upstream", "mirror", "--dir", join(dir, "mirror"), "--port", "0"], {
    env: { ...process.env, SWITCHYARD_UPSTREAM_BIN: bin, SWITCHYARD_CACHE_DIR: join(dir, "own-cache") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.on("close", (code) => resolve(code)));
  try {
    let stdout = "";
    await new Promise<void>((resolve, reject) => {
      child.stdout.on("data", (d) => {
        stdout += d;
        if (stdout.includes("upstream build\n")) resolve();
      });
      child.on("close", () => reject(new Error(`exited early: ${stdout}`)));
    });
    assert.match(stdout, /^mirrored kube-apiserver, .*, coredns into /);
    const exports = Object.fromEntries(
      [...stdout.matchAll(/^ {2}export (\w+)=(\S+)$/gm)].map((m) => [m[1] as string, m[2] as string]),
    );
    assert.deepEqual(Object.keys(exports).sort(), [
      "SWITCHYARD_COREDNS_RELEASES",
      "SWITCHYARD_ETCD_RELEASES",
      "SWITCHYARD_K8S_RELEASES",
    ]);
    const cache = join(dir, "other-machine");
    const result = await buildUpstream({
      env: { SWITCHYARD_CACHE_DIR: cache, PATH: join(dir, "no-go"), ...exports },
      out: { write: () => {} },
    });
    assert.deepEqual(result.built, []);
    assert.deepEqual(
      result.downloaded,
      binarySpecs.map((s) => s.name),
    );
    for (const s of binarySpecs)
      assert.equal(readFileSync(join(result.binDir, s.name), "utf8"), `#!/bin/sh\necho ${s.name}\n`);
  } finally {
    child.kill("SIGTERM");
  }
  assert.equal(await exited, 0, "Ctrl-C (SIGTERM) stops it cleanly");
});
