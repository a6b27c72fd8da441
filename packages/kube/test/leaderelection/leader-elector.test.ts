import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { LeaderElector } from "../../src/leaderelection/leader-elector.js";
import { LeaseLock } from "../../src/leaderelection/lease-lock.js";
import { formatMicroTime, parseMicroTime } from "../../src/leaderelection/micro-time.js";
import type { RestClient } from "../../src/rest/client.js";
import { leases } from "../../src/rest/resources.js";
import { FakeApi } from "../../src/testing/fake-api.js";
import { FakeClock } from "../../src/testing/fake-clock.js";

function candidate(api: RestClient, clock: FakeClock, identity: string, releaseOnCancel = false) {
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
        events.push(`${identity} started at ${clock.now()}`);
      },
      onStoppedLeading: () => {
        log.push("stopped");
        events.push(`${identity} stopped at ${clock.now()}`);
      },
      onNewLeader: (id) => log.push(`leader ${id}`),
    },
  });
  const abort = new AbortController();
  const done = elector.run(abort.signal);
  return { elector, log, abort, done, leadingSignal: () => leading };
}

/** Both candidates' starts and stops, in the order they happened. */
let events: string[] = [];

/**
 * A blackholed apiserver: once `on`, every call (reads and writes) waits forever, as a request on a connection whose
 * packets are dropped does, and never looks at its signal, so only the elector's own bounds can end it.
 */
class Blackhole implements RestClient {
  on = false;
  calls = 0;
  constructor(readonly api: FakeApi) {}
  #pass<T>(call: () => Promise<T>): Promise<T> {
    if (!this.on) return call();
    this.calls++;
    return new Promise<T>(() => {});
  }
  get: RestClient["get"] = (res, name, opts) => this.#pass(() => this.api.get(res, name, opts));
  list: RestClient["list"] = (res, opts) => this.#pass(() => this.api.list(res, opts));
  create: RestClient["create"] = (res, obj, opts) => this.#pass(() => this.api.create(res, obj, opts));
  update: RestClient["update"] = (res, obj, opts) => this.#pass(() => this.api.update(res, obj, opts));
  patch: RestClient["patch"] = (res, name, type, patch, opts) =>
    this.#pass(() => this.api.patch(res, name, type, patch, opts));
  delete: RestClient["delete"] = (res, name, opts) => this.#pass(() => this.api.delete(res, name, opts));
  watch: RestClient["watch"] = (res, opts) => this.api.watch(res, opts);
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

  test("a blackholed apiserver: the leader stops at the renew deadline, before the standby can take over", async () => {
    events = [];
    const api = new FakeApi();
    const clock = new FakeClock();
    const path = new Blackhole(api);
    const a = candidate(path, clock, "a");
    await clock.advance(0);
    const b = candidate(api, clock, "b");
    await clock.advance(5_000);
    const lastRenew = parseMicroTime(lease(api)?.renewTime ?? "");
    path.on = true;
    // Before, the hung read held the round open until the HTTP client's own 30 s timeout, long after the
    // lease had expired for b: two leaders for 15 s.
    while (!b.elector.isLeader() && clock.now() - lastRenew < 60_000) await clock.advance(250);
    await a.done;
    // The next round starts one retry period after the last renewal and ends at the renew deadline; b judges
    // expiry from when it saw that renewal, so not before lastRenew + the lease duration.
    const [aStarted, aStopped, bStarted] = events;
    assert.equal(aStarted, `a started at ${lastRenew - 4_000}`);
    assert.equal(aStopped, `a stopped at ${lastRenew + 2_000 + 10_000}`);
    assert.match(bStarted ?? "", /^b started at \d+$/);
    assert.ok(Number(bStarted?.split(" ").at(-1)) >= lastRenew + 15_000, bStarted);
    assert.equal(a.leadingSignal()?.aborted, true);
    assert.ok(path.calls >= 2, "the round kept retrying inside the deadline");
    b.abort.abort();
    await b.done;
  });

  test("each lease request is bounded by max(1 s, renewDeadline / 2), also while acquiring", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const path = new Blackhole(api);
    path.on = true;
    const a = candidate(path, clock, "a");
    await clock.advance(4_999);
    assert.equal(path.calls, 1, "the first read is still waiting");
    await clock.advance(1);
    path.on = false;
    // The failed attempt is followed by the next after one retry period (no jitter here).
    await clock.advance(2_000);
    assert.equal(a.elector.isLeader(), true);
    a.abort.abort();
    await a.done;
  });

  test("releasing on shutdown gives up once its request has had its limit", async () => {
    const api = new FakeApi();
    const clock = new FakeClock();
    const path = new Blackhole(api);
    const a = candidate(path, clock, "a", true);
    await clock.advance(0);
    path.on = true;
    a.abort.abort();
    let ended = false;
    void a.done.then(() => {
      ended = true;
    });
    await clock.advance(4_999);
    assert.equal(ended, false, "the release is still waiting");
    await clock.advance(1);
    assert.equal(ended, true);
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
