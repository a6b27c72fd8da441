// Proxy health (/healthz, /livez) and the per-Service health checks, on a fake clock and
// fake listeners.
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { FakeClock } from "@switchyard/kube/testing";
import { ProxyHealth } from "../../src/healthcheck/proxy-health.js";
import { goTimeString } from "../../src/healthcheck/response.js";
import { type HealthListen, ServiceHealthServer } from "../../src/healthcheck/service-health.js";

const T0 = Date.UTC(2024, 4, 1, 10, 0, 0);

describe("ProxyHealth", () => {
  function setup() {
    const time = new FakeClock(T0);
    const counted: string[] = [];
    const health = new ProxyHealth({
      clock: time,
      healthTimeoutMs: 60_000,
      onResponse: (path, status) => counted.push(`${path} ${status}`),
    });
    return { time, health, counted };
  }

  test("healthy at start-up and while queued changes are younger than the timeout", async () => {
    const { time, health } = setup();
    assert.equal(health.healthz().status, 200);
    health.queuedUpdate("IPv4");
    await time.advance(59_999);
    assert.equal(health.healthz().status, 200);
    assert.equal(health.livez().status, 200);
  });

  test("503 once the oldest queued change waits 2 × syncPeriod; a sync makes it healthy again", async () => {
    const { time, health, counted } = setup();
    health.updated("IPv4");
    health.queuedUpdate("IPv4");
    await time.advance(30_000);
    health.queuedUpdate("IPv4"); // a newer change does not reset the age
    await time.advance(30_000);
    const sick = health.healthz();
    assert.equal(sick.status, 503);
    assert.equal(
      sick.body,
      `{"lastUpdated": "2024-05-01 10:00:00 +0000 UTC","currentTime": "2024-05-01 10:01:00 +0000 UTC", "nodeEligible": true}`,
    );
    assert.equal(health.livez().status, 503);
    health.updated("IPv4");
    const ok = health.livez();
    assert.equal(ok.status, 200);
    assert.deepEqual(JSON.parse(ok.body), {
      lastUpdated: "2024-05-01 10:01:00 +0000 UTC",
      currentTime: "2024-05-01 10:01:00 +0000 UTC",
    });
    assert.deepEqual(counted, ["/healthz 503", "/livez 503", "/livez 200"]);
  });

  test("one lagging family is enough to be unhealthy", async () => {
    const { time, health } = setup();
    health.queuedUpdate("IPv6");
    health.queuedUpdate("IPv4");
    await time.advance(1000);
    health.updated("IPv4");
    await time.advance(60_000);
    assert.equal(health.isHealthy(), false);
    assert.match(health.healthz().body, /"lastUpdated": "0001-01-01 00:00:00 \+0000 UTC"/);
  });

  test("a node being deleted fails /healthz but not /livez", () => {
    const { health } = setup();
    health.syncNode({ deleting: false, taintKeys: ["ToBeDeletedByClusterAutoscaler"] });
    assert.equal(health.healthz().status, 503);
    assert.match(health.healthz().body, /"nodeEligible": false}$/);
    assert.equal(health.livez().status, 200);
    health.syncNode({ deleting: false, taintKeys: [] });
    assert.equal(health.healthz().status, 200);
    assert.equal(health.handle("/other").status, 404);
  });

  test("Go's time format trims the fraction", () => {
    assert.equal(goTimeString(T0 + 500), "2024-05-01 10:00:00.5 +0000 UTC");
    assert.equal(goTimeString(T0 + 123), "2024-05-01 10:00:00.123 +0000 UTC");
  });
});

describe("ServiceHealthServer", () => {
  function fakeListen() {
    const open = new Map<number, () => ReturnType<Parameters<HealthListen>[1]>>();
    const listen: HealthListen = async (port, respond) => {
      if (open.has(port)) throw new Error(`listen tcp :${port}: bind: address already in use`);
      open.set(port, respond);
      return { close: async () => void open.delete(port) };
    };
    return { open, listen };
  }

  test("answers 200 with the local endpoint count, 503 without local endpoints", async () => {
    const { open, listen } = fakeListen();
    const hs = new ServiceHealthServer({ listen, proxyHealthy: () => true });
    await hs.syncServices(new Map([["ns1/svc1", 30000]]));
    hs.syncEndpoints(new Map([["ns1/svc1", 2]]));
    const r = open.get(30000)?.();
    assert.equal(r?.status, 200);
    assert.equal(
      r?.body,
      '{\n\t"service": {\n\t\t"namespace": "ns1",\n\t\t"name": "svc1"\n\t},\n\t"localEndpoints": 2,\n\t"serviceProxyHealthy": true\n}',
    );
    hs.syncEndpoints(new Map());
    const none = open.get(30000)?.();
    assert.equal(none?.status, 503);
    assert.equal(JSON.parse(none?.body ?? "").localEndpoints, 0);
  });

  test("an unhealthy proxy fails the check even with local endpoints", async () => {
    const { open, listen } = fakeListen();
    let healthy = true;
    const hs = new ServiceHealthServer({ listen, proxyHealthy: () => healthy });
    await hs.syncServices(new Map([["ns1/svc1", 30000]]));
    hs.syncEndpoints(new Map([["ns1/svc1", 1]]));
    healthy = false;
    const r = open.get(30000)?.();
    assert.equal(r?.status, 503);
    assert.equal(JSON.parse(r?.body ?? "").serviceProxyHealthy, false);
  });

  test("syncServices opens, moves and closes ports; a failed bind skips only that Service", async () => {
    const { open, listen } = fakeListen();
    const failures: string[] = [];
    const hs = new ServiceHealthServer({
      listen,
      proxyHealthy: () => true,
      onListenError: (svc, port) => failures.push(`${svc}:${port}`),
    });
    await listen(30002, () => ({ status: 200, headers: {}, body: "someone else" }));
    await hs.syncServices(
      new Map([
        ["ns1/a", 30000],
        ["ns1/b", 30001],
        ["ns1/c", 30002],
      ]),
    );
    assert.deepEqual(failures, ["ns1/c:30002"]);
    assert.deepEqual(
      [...hs.services],
      [
        ["ns1/a", 30000],
        ["ns1/b", 30001],
      ],
    );
    await hs.syncServices(new Map([["ns1/a", 30005]]));
    assert.deepEqual([...open.keys()].sort(), [30002, 30005]);
    await hs.close();
    assert.deepEqual([...open.keys()], [30002]);
  });
});
