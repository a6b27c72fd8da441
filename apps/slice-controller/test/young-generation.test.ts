// The command runs with Node's own young-generation sizing: it does not start itself again with a small semi-space
// as switchyard-proxy and switchyard-dns do (see bin/switchyard-slice-controller.js for the measurement). Each node
// image prints its execArgv through an --import hook, which a restart would keep.
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../bin/switchyard-slice-controller.js", import.meta.url));
const HOOK = 'data:text/javascript,console.error("execArgv:", process.execArgv.join(" "))';

test("the command runs once, as started, with Node's own semi-space size", () => {
  const r = spawnSync(process.execPath, ["--import", HOOK, BIN, "--help"], { encoding: "utf8" });
  assert.equal(r.status, 0, r.stderr);
  const images = r.stderr.split("\n").filter((l) => l.startsWith("execArgv:"));
  assert.equal(images.length, 1, images.join("\n"));
  assert.doesNotMatch(images[0] ?? "", /max-semi-space-size/);
});
