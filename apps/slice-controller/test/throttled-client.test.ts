// --kube-api-qps / --kube-api-burst as client-go applies them: a token bucket per client, zero meaning client-go's
// default (5 QPS, burst 10), negative QPS meaning no limit. On a manual clock: which requests had to wait, and how
// long, is exact rather than measured.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type RestClient, services } from "@switchyard/kube";
import { FakeClock, flushAsync } from "@switchyard/kube/testing";
import { ThrottledClient } from "../src/index.js";

const inner = { get: async () => ({}) } as unknown as RestClient;

/** Starts `requests` gets at once; how many went through before the clock moved, and the waits still pending. */
async function issue(qps: number, burst: number, requests: number) {
  const clock = new FakeClock();
  const client = new ThrottledClient(inner, qps, burst, clock);
  let done = 0;
  const all = Array.from({ length: requests }, () => client.get(services, "x").then(() => done++));
  await flushAsync();
  const immediately = done;
  const waits = clock.pendingDelays();
  await clock.advance(Math.max(0, ...waits));
  await Promise.all(all);
  return { immediately, waits };
}

describe("ThrottledClient", () => {
  test("the burst goes through at once; each later request waits one token's time (1/QPS)", async () => {
    assert.deepEqual(await issue(10, 3, 3), { immediately: 3, waits: [] });
    assert.deepEqual(await issue(10, 3, 5), { immediately: 3, waits: [100, 200] });
  });
  test("negative QPS: no limit at all", async () => {
    assert.deepEqual(await issue(-1, -1, 50), { immediately: 50, waits: [] });
  });
  test("zero QPS and zero burst take client-go's 5 and 10", async () => {
    assert.deepEqual(await issue(0, 0, 11), { immediately: 10, waits: [200] });
  });
  test("a fence ends requests in flight and waiting for a token, and fails later ones at once", async () => {
    const clock = new FakeClock();
    // A request that only ends when its signal aborts, as one to a blackholed apiserver does.
    const hanging = {
      update: (_res: unknown, _obj: unknown, opts?: { signal?: AbortSignal }) =>
        new Promise((_resolve, reject) =>
          opts?.signal?.addEventListener("abort", () => reject(opts.signal?.reason)),
        ),
    } as unknown as RestClient;
    const lost = new AbortController();
    const client = new ThrottledClient(hanging, 1, 1, clock, lost.signal);
    const svc = { metadata: { name: "x", namespace: "ns" } };
    const inFlight = client.update(services, svc);
    const waiting = client.update(services, svc);
    inFlight.catch(() => {});
    waiting.catch(() => {});
    await flushAsync();
    assert.deepEqual(clock.pendingDelays(), [1000], "the second waits for a token");
    lost.abort(new Error("leader election lost"));
    await assert.rejects(inFlight, /leader election lost/);
    await assert.rejects(waiting, /leader election lost/);
    await assert.rejects(client.update(services, svc), /leader election lost/);
  });
});
