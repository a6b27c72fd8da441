import assert from "node:assert/strict";
import { test } from "node:test";
import { StepClock, stepTable } from "../../src/timing/step-times.js";

test("overlapping steps keep their own starts, and a failed step is recorded", async () => {
  let now = 1000;
  const clock = new StepClock(() => now);
  let release: () => void = () => {};
  const slow = clock.time("images", () => new Promise<void>((r) => (release = r)));
  now = 1500;
  await clock.time("nodes", async () => {
    now = 3500;
  });
  now = 4000;
  release();
  await slow;
  await assert.rejects(
    clock.time("stack", async () => {
      now = 4200;
      throw new Error("no");
    }),
  );
  assert.deepEqual(clock.times, [
    { step: "images", startMs: 0, endMs: 3000 },
    { step: "nodes", startMs: 500, endMs: 2500 },
    { step: "stack", startMs: 3000, endMs: 3200 },
  ]);
  assert.deepEqual(stepTable(clock.times), [
    "STEP      START   TOOK",
    "images      0.0    3.0",
    "nodes       0.5    2.0",
    "stack       3.0    0.2",
  ]);
});
