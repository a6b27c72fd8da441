import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { WorkQueue } from "../../src/workqueue/queue.js";

function queue() {
  return new WorkQueue<string>({ registry: false });
}

async function take(q: WorkQueue<string>): Promise<string> {
  const next = await q.get();
  assert.equal(next.shutdown, false);
  return (next as { item: string }).item;
}

const tick = () => new Promise((resolve) => setImmediate(resolve));

describe("WorkQueue", () => {
  test("coalesces adds of a waiting item and keeps first-added order", async () => {
    const q = queue();
    for (const key of ["a", "b", "a", "c", "b"]) q.add(key);
    assert.equal(q.len(), 3);
    assert.deepEqual([await take(q), await take(q), await take(q)], ["a", "b", "c"]);
  });

  test("an item re-added while processing is queued again only after done", async () => {
    const q = queue();
    q.add("a");
    const item = await take(q);
    q.add("a");
    q.add("a");
    assert.equal(q.len(), 0, "not handed to a second worker while in flight");
    q.done(item);
    assert.equal(q.len(), 1);
    assert.equal(await take(q), "a");
  });

  test("get waits for an add", async () => {
    const q = queue();
    let got: string | undefined;
    const pending = take(q).then((item) => {
      got = item;
    });
    await tick();
    assert.equal(got, undefined);
    q.add("x");
    await pending;
    assert.equal(got, "x");
  });

  test("many async workers never process one key at the same time, and every add is seen", async () => {
    const q = queue();
    const inFlight = new Set<string>();
    const violations: string[] = [];
    // Versions added per key, and the latest version a worker saw when it started on the key.
    const latestAdded = new Map<string, number>();
    const latestSeen = new Map<string, number>();
    let processed = 0;
    const worker = async () => {
      for (;;) {
        const next = await q.get();
        if (next.shutdown) return;
        const key = next.item;
        if (inFlight.has(key)) violations.push(key);
        inFlight.add(key);
        latestSeen.set(key, latestAdded.get(key) ?? 0);
        for (let i = 0; i < (processed % 4) + 1; i++) await tick();
        processed++;
        inFlight.delete(key);
        q.done(key);
      }
    };
    const workers = Array.from({ length: 8 }, worker);
    for (let round = 0; round < 300; round++) {
      const key = `k${(round * 7) % 13}`;
      latestAdded.set(key, round);
      q.add(key);
      if (round % 3 === 0) await tick();
    }
    await q.shutDownWithDrain();
    await Promise.all(workers);
    assert.deepEqual(violations, []);
    // Every key was processed after its last add: nothing was lost to coalescing.
    assert.deepEqual(latestSeen, latestAdded);
    assert.ok(processed < 300, `adds coalesced (${processed} runs for 300 adds)`);
  });

  test("shutDown wakes idle workers; queued items are still handed out first", async () => {
    const q = queue();
    const idle = q.get();
    q.shutDown();
    assert.deepEqual(await idle, { shutdown: true });

    const q2 = queue();
    q2.add("left");
    q2.shutDown();
    q2.add("ignored");
    assert.equal(await take(q2), "left");
    assert.deepEqual(await q2.get(), { shutdown: true });
  });

  test("shutDownWithDrain waits for in-flight items", async () => {
    const q = queue();
    q.add("a");
    const item = await take(q);
    let drained = false;
    const draining = q.shutDownWithDrain().then(() => {
      drained = true;
    });
    await tick();
    assert.equal(drained, false);
    assert.equal(q.shuttingDown(), true);
    q.done(item);
    await draining;
    assert.equal(drained, true);
  });
});
