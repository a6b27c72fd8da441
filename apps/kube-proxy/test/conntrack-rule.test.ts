import assert from "node:assert/strict";
import { test } from "node:test";
import { keepFlowsToTerminatingFrom } from "../src/main.js";

test("SWITCHYARD_PROXY_CONNTRACK: terminating endpoints' answered flows go by default, upstream's rule on request, else one line", () => {
  assert.equal(keepFlowsToTerminatingFrom({}), false);
  assert.equal(keepFlowsToTerminatingFrom({ SWITCHYARD_PROXY_CONNTRACK: "drain-terminating" }), false);
  assert.equal(keepFlowsToTerminatingFrom({ SWITCHYARD_PROXY_CONNTRACK: "upstream" }), true);
  assert.throws(
    () => keepFlowsToTerminatingFrom({ SWITCHYARD_PROXY_CONNTRACK: "keep" }),
    /^Error: SWITCHYARD_PROXY_CONNTRACK="keep": want "drain-terminating" \(default\) or "upstream"$/,
  );
});
