import assert from "node:assert/strict";
import { test } from "node:test";
import { isRealExec, realExec } from "@switchyard/proxier";
import { execFrom } from "../src/main.js";

test("SWITCHYARD_PROXY_EXEC_TIMEOUT: the default limit unless a Go duration gives another, else one line", async () => {
  assert.equal(execFrom({}), realExec);
  const quick = execFrom({ SWITCHYARD_PROXY_EXEC_TIMEOUT: "200ms" });
  assert.ok(isRealExec(quick));
  await assert.rejects(
    quick("sleep", ["30"]),
    /^ExecTimeoutError: sleep: still running after 200ms, killed \(exec timeout\)$/,
  );
  assert.equal((await execFrom({ SWITCHYARD_PROXY_EXEC_TIMEOUT: "0" })("true", [])).code, 0);
  for (const bad of ["soon", "-1s", ""]) {
    assert.throws(
      () => execFrom({ SWITCHYARD_PROXY_EXEC_TIMEOUT: bad }),
      new RegExp(
        `^Error: SWITCHYARD_PROXY_EXEC_TIMEOUT=${JSON.stringify(bad)}: want a duration such as "90s" or "2m" \\("0" for no limit\\)$`,
      ),
    );
  }
});
