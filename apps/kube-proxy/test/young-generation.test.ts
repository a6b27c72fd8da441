// The command restarts itself once with a small young generation before main loads; SWITCHYARD_PROXY_NODE_FLAGS=keep
// leaves Node's own sizing. Each node image prints its execArgv through an --import hook (kept across the restart).
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { test } from "node:test";
import { fileURLToPath } from "node:url";

const BIN = fileURLToPath(new URL("../bin/switchyard-proxy.js", import.meta.url));
const HOOK = 'data:text/javascript,console.error("execArgv:", process.execArgv.join(" "))';

function images(env: NodeJS.ProcessEnv): string[] {
  const r = spawnSync(process.execPath, ["--import", HOOK, BIN, "--version"], { encoding: "utf8", env });
  return r.stderr.split("\n").filter((l) => l.startsWith("execArgv:"));
}

test("the command runs again with --max-semi-space-size=2, once; SWITCHYARD_PROXY_NODE_FLAGS=keep runs it as started", () => {
  const restarted = images({ ...process.env, SWITCHYARD_PROXY_NODE_FLAGS: "" });
  assert.equal(restarted.length, 2, restarted.join("\n"));
  assert.doesNotMatch(restarted[0] ?? "", /max-semi-space-size/);
  assert.match(restarted[1] ?? "", /--max-semi-space-size=2/);
  const kept = images({ ...process.env, SWITCHYARD_PROXY_NODE_FLAGS: "keep" });
  assert.equal(kept.length, 1, kept.join("\n"));
  assert.doesNotMatch(kept[0] ?? "", /max-semi-space-size/);
});
