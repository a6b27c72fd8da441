import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Registry } from "prom-client";
import { FakeClock } from "../../src/testing/fake-clock.js";
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialRateLimiter,
} from "../../src/workqueue/rate-limiters.js";
import { RateLimitingQueue } from "../../src/workqueue/rate-limiting-queue.js";
import { retryOrForget, runWorkers } from "../../src/workqueue/workers.js";

describe("rate limiters", () => {
  test("per-item exponential backoff doubles to its cap and forget resets it", () => {
    const limiter = new ItemExponentialRateLimiter<string>(1000, 10_000);
    const delays = Array.from({ length: 6 }, () => limiter.when("a"));
    assert.deepEqual(delays, [1000, 2000, 4000, 8000, 10_000, 10_000]);
    assert.equal(limiter.when("b"), 1000, "items back off independently");
    assert.equal(limiter.numRequeues("a"), 6);
    limiter.forget("a");
    assert.equal(limiter.numRequeues("a"), 0);
    assert.equal(limiter.when("a"), 1000);
  });

  test("token bucket allows the burst, then spaces retries at 1/qps", async () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter<string>(10, 100, clock);
    const first = Array.from({ length: 100 }, (_, i) => limiter.when(`k${i}`));
    assert.ok(first.every((d) => d === 0));
    assert.equal(Math.round(limiter.when("x")), 100);
    assert.equal(Math.round(limiter.when("y")), 200);
    // One second refills ten tokens, which pays off the two reservations and leaves eight.
    await clock.advance(1000);
    const after = Array.from({ length: 9 }, (_, i) => Math.round(limiter.when(`z${i}`)));
    assert.deepEqual(after, [0, 0, 0, 0, 0, 0, 0, 0, 100]);
  });

  test("the default controller limiter takes the larger of backoff and bucket", () => {
    const clock = new FakeClock();
    const limiter = defaultControllerRateLimiter<string>({ clock, burst: 2, qps: 1 });
    assert.equal(limiter.when("a"), 1000);
    assert.equal(limiter.when("a"), 2000);
    // The bucket is now empty: a fresh item waits for the bucket (1 s), not for its backoff.
    assert.equal(limiter.when("b"), 1000);
    assert.equal(limiter.when("c"), 2000);
  });
});

describe("RateLimitingQueue", () => {
  test("addAfter delivers after the delay and keeps the earliest of two delays", async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({ clock, registry: false });
    q.addAfter("a", 5000);
    q.addAfter("a", 1000);
    q.addAfter("a", 9000);
    assert.equal(q.len(), 0);
    await clock.advance(999);
    assert.equal(q.len(), 0);
    await clock.advance(1);
    assert.equal(q.len(), 1);
    await clock.advance(10_000);
    assert.equal(q.len(), 1, "the later delays were merged into the first");
    q.shutDown();
  });

  test("addRateLimited follows the backoff sequence until forget", async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({ clock, registry: false });
    const seenAt: number[] = [];
    const start = clock.now();
    for (let i = 0; i < 4; i++) {
      q.addRateLimited("a");
      while (q.len() === 0) await clock.advance(100);
      const next = await q.get();
      assert.equal(next.shutdown, false);
      seenAt.push(clock.now() - start);
      q.done("a");
    }
    assert.deepEqual(seenAt, [1000, 3000, 7000, 15_000]);
    assert.equal(q.numRequeues("a"), 4);
    q.forget("a");
    assert.equal(q.numRequeues("a"), 0);
    q.shutDown();
    assert.equal(clock.pendingTimers(), 0);
  });

  test("retryOrForget retries up to maxRetries, then drops", () => {
    const q = new RateLimitingQueue<string>({ clock: new FakeClock(), registry: false });
    const outcomes = Array.from({ length: 4 }, () => retryOrForget(q, "a", new Error("boom"), 3));
    assert.deepEqual(outcomes, ["retried", "retried", "retried", "dropped"]);
    assert.equal(q.numRequeues("a"), 0);
    assert.equal(retryOrForget(q, "b", undefined, 3), "done");
    q.shutDown();
  });

  test("runWorkers retries failures with backoff and exits on shutdown", async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({ clock, registry: false });
    let attempts = 0;
    const running = runWorkers(q, 2, async () => {
      attempts++;
      if (attempts < 3) throw new Error("not yet");
    });
    q.add("a");
    await clock.advance(0);
    assert.equal(attempts, 1);
    await clock.advance(1000);
    assert.equal(attempts, 2);
    await clock.advance(2000);
    assert.equal(attempts, 3);
    assert.equal(q.numRequeues("a"), 0, "success forgets the item");
    q.shutDown();
    await running;
  });
});

describe("workqueue metrics", () => {
  test("reports client-go's workqueue metrics in an injected registry", async () => {
    const clock = new FakeClock();
    const registry = new Registry();
    const q = new RateLimitingQueue<string>({ name: "slices", clock, registry });
    q.add("a");
    q.add("b");
    q.add("a");
    await clock.advance(2000);
    const a = await q.get();
    assert.equal(a.shutdown, false);
    await clock.advance(3000);
    q.addRateLimited("c");

    const value = async (name: string) => {
      const metric = await registry.getSingleMetric(name)?.get();
      return metric?.values.find((v) => v.labels.name === "slices" && !("le" in v.labels))?.value;
    };
    assert.equal(await value("workqueue_adds_total"), 2);
    assert.equal(await value("workqueue_depth"), 1);
    assert.equal(await value("workqueue_retries_total"), 1);
    assert.equal(await value("workqueue_unfinished_work_seconds"), 3);
    assert.equal(await value("workqueue_longest_running_processor_seconds"), 3);
    const queued = await registry.getSingleMetric("workqueue_queue_duration_seconds")?.get();
    const sum = queued?.values.find(
      (v) => (v as { metricName?: string }).metricName === "workqueue_queue_duration_seconds_sum",
    );
    assert.equal(sum?.value, 2);

    q.done("a");
    const work = await registry.getSingleMetric("workqueue_work_duration_seconds")?.get();
    assert.equal(
      work?.values.find(
        (v) => (v as { metricName?: string }).metricName === "workqueue_work_duration_seconds_count",
      )?.value,
      1,
    );
    assert.equal(await value("workqueue_unfinished_work_seconds"), 0);
    q.shutDown();
  });
});
