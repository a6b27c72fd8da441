import assert from "node:assert/strict";
import { test } from "node:test";
import { eventually, sleep } from "../../src/testing/wait.js";

test("eventually resolves with the first value that is neither undefined nor false", async () => {
  let calls = 0;
  const answers = [undefined, false, "ready"];
  const value = await eventually("the third answer", () => answers[calls++], { intervalMs: 1 });
  assert.equal(value, "ready");
  assert.equal(calls, 3);
});

test("eventually retries a probe that throws, and waits for an async probe", async () => {
  let calls = 0;
  const value = await eventually(
    "a server that refuses at first",
    async () => {
      if (++calls < 3) throw new Error("connection refused");
      return calls;
    },
    { intervalMs: 1 },
  );
  assert.equal(value, 3);
});

test("eventually names what it waited for, the last error and the state on timeout", async () => {
  const refused = new Error("connection refused");
  await assert.rejects(
    eventually(
      "the banner",
      () => {
        throw refused;
      },
      { timeoutMs: 20, intervalMs: 5, describe: () => "last output: nothing" },
    ),
    (err: Error) => {
      assert.equal(
        err.message,
        "gave up after 20 ms waiting for the banner: connection refused\nlast output: nothing",
      );
      assert.equal(err.cause, refused);
      return true;
    },
  );
  await assert.rejects(
    eventually("never", () => false, { timeoutMs: 10, intervalMs: 5 }),
    {
      message: "gave up after 10 ms waiting for never",
    },
  );
});

test("sleep waits in real time and stops early on abort", async () => {
  const start = Date.now();
  await sleep(20);
  assert.ok(Date.now() - start >= 19);
  const controller = new AbortController();
  const pending = sleep(60_000, controller.signal);
  controller.abort(new Error("stopped"));
  await assert.rejects(pending, { message: "stopped" });
});
