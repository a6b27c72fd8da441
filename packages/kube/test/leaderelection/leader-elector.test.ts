import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LeaderElector } from "../../src/leaderelection/leader-elector.js";
import { LeaseLock } from "../../src/leaderelection/lease-lock.js";
import { formatMicroTime } from "../../src/leaderelection/micro-time.js";
import { leases } from "../../src/rest/resources.js";
import { FakeApi } from "../../src/testing/fake-api.js";
import { FakeClock } from "../../src/testing/fake-clock.js";

function candidate(api: FakeApi, clock: FakeClock, identity: string, releaseOnCancel = false) {
  const log: string[] = [];
  let leading: AbortSignal | undefined;
  const elector = new LeaderElector({
    lock: new LeaseLock(api, "kube-system", "switchyard"),
    identity,
    clock,
    random: () => 0,
    releaseOnCancel,
    callbacks: {
      onStartedLeading: (signal) => {
        leading = signal;
        log.push("started");
      },
      onStoppedLeading: () => log.push("stopped"),
      onNewLeader: (id) => log.push(`leader ${id}`),
    },
  });
  const abort = new AbortController();
  const done = elector.run(abort.signal);
  return { elector, log, abort, done, leadingSignal: () => leading };
}

const lease = (api: FakeApi) => api.peek(leases, "kube-system", "switchyard")?.spec;

describe("formatMicroTime", () => {
  test("always writes six fractional digits", () => {
    assert.equal(formatMicroTime(Date.UTC(2024, 0, 2, 3, 4, 5, 67)), "2024-01-02T03:04:05.067000Z");
    assert.equal(formatMicroTime(Date.UTC(2024, 0, 2, 3, 4, 5)), "2024-01-02T03:04:05.000000Z");
  });
});

describe("LeaderElector", () => {
  test("acquires a missing lease and keeps renewing it", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const a = candidate(api, clock, "a");
    await clock.advance(0);
    assert.deepEqual(a.log, ["leader a", "started"]);
    assert.equal(a.elector.isLeader(), true);
    const first = lease(api);
    assert.equal(first?.holderIdentity, "a");
    assert.equal(first?.leaseDurationSeconds, 15);
    assert.equal(first?.leaseTransitions, 0);
    assert.match(first?.renewTime ?? "", /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);

    await clock.advance(10_000);
    const later = lease(api);
    assert.equal(later?.acquireTime, first?.acquireTime);
    assert.equal(later?.renewTime, formatMicroTime(clock.now()));
    a.abort.abort();
    await a.done;
    assert.deepEqual(a.log.at(-1), "stopped");
  });

  test("a second candidate waits, then takes over once the leader stops renewing", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const a = candidate(api, clock, "a");
    await clock.advance(0);
    const b = candidate(api, clock, "b");
    await clock.advance(30_000);
    assert.equal(b.elector.isLeader(), false);
    assert.deepEqual(b.log, ["leader a"]);

    // "a" dies without releasing: its renewals stop.
    a.abort.abort();
    await a.done;
    const diedAt = clock.now();
    while (!b.elector.isLeader() && clock.now() - diedAt < 60_000) await clock.advance(500);
    const waited = clock.now() - diedAt;
    assert.ok(waited >= 13_000 && waited <= 17_000, `took over after ${waited} ms`);
    assert.deepEqual(b.log, ["leader a", "leader b", "started"]);
    assert.equal(lease(api)?.holderIdentity, "b");
    assert.equal(lease(api)?.leaseTransitions, 1);
    b.abort.abort();
    await b.done;
  });

  test("steps down when it cannot renew within the renew deadline", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const a = candidate(api, clock, "a");
    await clock.advance(0);
    assert.equal(a.leadingSignal()?.aborted, false);
    for (let i = 0; i < 20; i++) api.failNext("get", 503);
    await clock.advance(9_000);
    assert.equal(a.leadingSignal()?.aborted, false, "still inside the renew deadline");
    await clock.advance(4_000);
    assert.equal(a.leadingSignal()?.aborted, true);
    await a.done;
    assert.deepEqual(a.log, ["leader a", "started", "stopped"]);
  });

  test("retries after a write conflict", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    await api.seed(leases, { metadata: { name: "switchyard", namespace: "kube-system" }, spec: {} });
    api.failNext("update", 409);
    const a = candidate(api, clock, "a");
    await clock.advance(0);
    assert.equal(a.elector.isLeader(), false);
    await clock.advance(2_000);
    assert.equal(a.elector.isLeader(), true);
    assert.equal(lease(api)?.leaseTransitions, 1);
    a.abort.abort();
    await a.done;
  });

  test("releases the lease on shutdown so the next candidate need not wait", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const a = candidate(api, clock, "a", true);
    await clock.advance(0);
    const b = candidate(api, clock, "b");
    await clock.advance(4_000);
    a.abort.abort();
    await a.done;
    assert.equal(lease(api)?.holderIdentity, "");
    assert.equal(lease(api)?.leaseDurationSeconds, 1);
    await clock.advance(2_000);
    assert.equal(b.elector.isLeader(), true);
    b.abort.abort();
    await b.done;
  });

  test("rejects timings that cannot work", () => {
    assert.throws(
      () =>
        new LeaderElector({
          lock: new LeaseLock(new FakeApi(), "ns", "l"),
          identity: "a",
          leaseDurationMs: 10_000,
          renewDeadlineMs: 10_000,
          callbacks: { onStartedLeading: () => undefined },
        }),
      /leaseDuration must be greater than renewDeadline/,
    );
  });
});
