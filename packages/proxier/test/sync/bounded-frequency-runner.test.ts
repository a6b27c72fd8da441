// The runner's bounds, driven by a fake clock: coalescing, the minimum gap, retries,
// the periodic run, and never two runs at once.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeClock } from "@switchyard/kube/testing";
import { BoundedFrequencyRunner, kubeProxyRunnerIntervals } from "../../src/sync/bounded-frequency-runner.js";
import { FullSyncPolicy } from "../../src/sync/full-sync-policy.js";

function harness(opts: { min?: number; retry?: number; max?: number } = {}) {
  const time = new FakeClock(0);
  const starts: number[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  let fail = false;
  let release: (() => void) | null = null;
  let hold = false;
  const runner = new BoundedFrequencyRunner({
    name: "test",
    minIntervalMs: opts.min ?? 1000,
    retryIntervalMs: opts.retry ?? 30_000,
    maxIntervalMs: opts.max ?? 3_600_000,
    clock: time,
    fn: async () => {
      starts.push(time.now());
      inFlight++;
      maxInFlight = Math.max(maxInFlight, inFlight);
      if (hold) await new Promise<void>((r) => (release = r));
      inFlight--;
      if (fail) throw new Error("sync failed");
    },
  });
  return {
    time,
    runner,
    starts,
    get maxInFlight() {
      return maxInFlight;
    },
    setFail: (v: boolean) => (fail = v),
    setHold: (v: boolean) => (hold = v),
    release: () => release?.(),
  };
}

describe("BoundedFrequencyRunner", () => {
  test("the first request runs at once; a burst within minInterval coalesces into one run", async () => {
    const h = harness();
    h.runner.start();
    h.runner.run();
    await h.time.advance(0);
    assert.deepEqual(h.starts, [0]);
    for (let i = 0; i < 5; i++) {
      await h.time.advance(100);
      h.runner.run();
    }
    await h.time.advance(499);
    assert.deepEqual(h.starts, [0], "ran before minInterval had passed");
    await h.time.advance(1);
    assert.deepEqual(h.starts, [0, 1000]);
    await h.time.advance(10_000);
    assert.deepEqual(h.starts, [0, 1000], "coalesced requests ran more than once");
  });

  test("minInterval counts from the end of a run, and runs never overlap", async () => {
    const h = harness();
    h.setHold(true);
    h.runner.start();
    h.runner.run();
    await h.time.advance(5000);
    h.runner.run();
    h.runner.run();
    await h.time.advance(5000);
    assert.deepEqual(h.starts, [0], "a second run started while the first was in progress");
    h.setHold(false);
    h.release();
    await h.time.advance(999);
    assert.deepEqual(h.starts, [0]);
    await h.time.advance(1);
    assert.deepEqual(h.starts, [0, 11_000]);
    assert.equal(h.maxInFlight, 1);
  });

  test("a failure is retried after retryInterval; a success cancels the retry", async () => {
    const h = harness({ retry: 30_000 });
    h.runner.start();
    h.setFail(true);
    h.runner.run();
    await h.time.advance(29_999);
    assert.deepEqual(h.starts, [0]);
    await h.time.advance(1);
    assert.deepEqual(h.starts, [0, 30_000]);
    // The retry failed too; a requested run succeeds first and the pending retry is dropped.
    h.setFail(false);
    await h.time.advance(5000);
    h.runner.run();
    await h.time.advance(0);
    assert.deepEqual(h.starts, [0, 30_000, 35_000]);
    await h.time.advance(60_000);
    assert.deepEqual(h.starts, [0, 30_000, 35_000]);
  });

  test("runs at least every maxInterval without requests", async () => {
    const h = harness({ max: 3_600_000 });
    h.runner.start();
    await h.time.advance(3_600_000);
    assert.deepEqual(h.starts, [3_600_000]);
    await h.time.advance(3_600_000);
    assert.deepEqual(h.starts, [3_600_000, 7_200_000]);
  });

  test("a request before start runs on start; stop cancels everything", async () => {
    const h = harness();
    h.runner.run();
    await h.time.advance(10_000);
    assert.deepEqual(h.starts, []);
    h.runner.start();
    await h.time.advance(0);
    assert.deepEqual(h.starts, [10_000]);
    h.runner.run();
    await h.runner.stop();
    await h.time.advance(10_000_000);
    assert.deepEqual(h.starts, [10_000]);
    assert.equal(h.time.pendingTimers(), 0);
  });

  test("kube-proxy's bounds: minSyncPeriod, retry after syncPeriod, one hour maximum", () => {
    assert.deepEqual(kubeProxyRunnerIntervals(), {
      minIntervalMs: 1000,
      retryIntervalMs: 30_000,
      maxIntervalMs: 3_600_000,
    });
    assert.throws(
      () =>
        new BoundedFrequencyRunner({
          name: "x",
          fn: async () => {},
          minIntervalMs: 2,
          retryIntervalMs: 1,
          maxIntervalMs: 1,
        }),
      /maxInterval must be >= minInterval/,
    );
  });
});

describe("FullSyncPolicy", () => {
  test("full at start, partial after a full success, full again after a failure", () => {
    const p = new FullSyncPolicy();
    assert.equal(p.fullSyncDue(0), true);
    p.synced({ full: true, ok: true, now: 0 });
    assert.equal(p.fullSyncDue(1000), false);
    p.synced({ full: false, ok: false, now: 1000 });
    assert.equal(p.fullSyncDue(2000), true);
    p.synced({ full: true, ok: true, now: 2000 });
    p.forceFullSync();
    assert.equal(p.fullSyncDue(3000), true);
  });

  test("a full sync is due once the last one is more than an hour old", () => {
    const p = new FullSyncPolicy();
    p.synced({ full: true, ok: true, now: 0 });
    p.synced({ full: false, ok: true, now: 1_800_000 });
    assert.equal(p.fullSyncDue(3_600_000), false, "exactly one hour is not yet more than an hour");
    assert.equal(p.fullSyncDue(3_600_001), true);
  });
});
