// --kube-api-qps / --kube-api-burst as client-go applies them: a token bucket per client, zero meaning client-go's
// default (5 QPS, burst 10), negative QPS meaning no limit.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { type RestClient, services } from "@switchyard/kube";
import { ThrottledClient } from "../src/index.js";

const inner = { get: async () => ({}) } as unknown as RestClient;

async function elapsedFor(client: ThrottledClient, requests: number): Promise<number> {
  const start = Date.now();
  for (let i = 0; i < requests; i++) await client.get(services, "x");
  return Date.now() - start;
}

describe("ThrottledClient", () => {
  test("the burst goes through at once, the next request waits for a token", async () => {
    assert.ok((await elapsedFor(new ThrottledClient(inner, 10, 3), 3)) < 50);
    assert.ok((await elapsedFor(new ThrottledClient(inner, 10, 3), 4)) >= 90);
  });
  test("negative QPS: no limit at all", async () => {
    assert.ok((await elapsedFor(new ThrottledClient(inner, -1, -1), 50)) < 50);
  });
  test("zero burst takes client-go's 10", async () => {
    assert.ok((await elapsedFor(new ThrottledClient(inner, 1, 0), 10)) < 50);
  });
});
