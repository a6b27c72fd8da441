import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeClock } from "@switchyard/kube/testing";
import { ownWritesSeen } from "../src/own-writes.js";

describe("ownWritesSeen", () => {
  test("resolves true as soon as the cache has caught up", async () => {
    const clock = new FakeClock();
    const start = clock.now();
    let stale = true;
    const seen = ownWritesSeen(() => stale, clock);
    await clock.advance(30);
    stale = false;
    await clock.advance(10);
    assert.equal(await seen, true);
    assert.ok(clock.now() - start < 100, "well before the deadline");
  });

  test("gives up after half a second", async () => {
    const clock = new FakeClock();
    let done = false;
    const seen = ownWritesSeen(() => true, clock).finally(() => {
      done = true;
    });
    await clock.advance(490);
    assert.equal(done, false);
    await clock.advance(20);
    assert.equal(await seen, false);
  });
});
