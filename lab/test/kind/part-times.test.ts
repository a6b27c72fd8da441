import assert from "node:assert/strict";
import { test } from "node:test";
import { partTimer } from "../../src/kind/part-times.js";
import { StepClock } from "../../src/timing/step-times.js";

test("a long step's progress lines become rows, each until the next line, the last until the end", async () => {
  let now = 0;
  const clock = new StepClock(() => now);
  const parts = partTimer(clock, (line) => `cluster: ${line}`);
  // Time passes while the step awaits its work, as on a real clock: the part that ended is stamped first.
  const after = async (ms: number) => {
    await new Promise((r) => setImmediate(r));
    now = ms;
  };
  await clock.time("cluster: creating", async () => {
    try {
      await after(100);
      parts.next("starting 2 node containers");
      await after(4000);
      parts.next("kubeadm init");
      await after(20_000);
      parts.next("kubeadm join");
      await after(30_000);
      throw new Error("join failed");
    } catch {
      // The failure still ends the last part.
    } finally {
      parts.end();
    }
  });
  assert.deepEqual(clock.times, [
    { step: "cluster: creating", startMs: 0, endMs: 30_000 },
    { step: "cluster: starting 2 node containers", startMs: 100, endMs: 4000 },
    { step: "cluster: kubeadm init", startMs: 4000, endMs: 20_000 },
    { step: "cluster: kubeadm join", startMs: 20_000, endMs: 30_000 },
  ]);
});
