import assert from "node:assert/strict";
import { test } from "node:test";
import { cleanupBeforeFirstSyncFrom } from "../src/main.js";

test("SWITCHYARD_PROXY_CLEANUP: after the first sync by default, upstream's order on request, else one line", () => {
  assert.equal(cleanupBeforeFirstSyncFrom({}), false);
  assert.equal(cleanupBeforeFirstSyncFrom({ SWITCHYARD_PROXY_CLEANUP: "after-first-sync" }), false);
  assert.equal(cleanupBeforeFirstSyncFrom({ SWITCHYARD_PROXY_CLEANUP: "before-first-sync" }), true);
  assert.throws(
    () => cleanupBeforeFirstSyncFrom({ SWITCHYARD_PROXY_CLEANUP: "first" }),
    /^Error: SWITCHYARD_PROXY_CLEANUP="first": want "after-first-sync" \(default\) or "before-first-sync"$/,
  );
});
