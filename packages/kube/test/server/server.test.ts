import assert from "node:assert/strict";
import { afterEach, describe, test } from "node:test";
import { Counter, Registry } from "prom-client";
import { ComponentServer } from "../../src/server/server.js";

const servers: ComponentServer[] = [];
afterEach(async () => {
  for (const s of servers.splice(0)) await s.stop();
});

async function started(registry = new Registry()) {
  const server = new ComponentServer({ port: 0, registry });
  servers.push(server);
  const address = await server.start();
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${address.port}${path}`);
    return { status: res.status, body: await res.text() };
  };
  return { server, address, get };
}

describe("ComponentServer", () => {
  test("binds to 127.0.0.1 and serves the registry on /metrics", async () => {
    const registry = new Registry();
    new Counter({ name: "switchyard_test_total", help: "test", registers: [registry] }).inc(3);
    const { address, get } = await started(registry);
    assert.equal(address.address, "127.0.0.1");
    const metrics = await get("/metrics");
    assert.equal(metrics.status, 200);
    assert.match(metrics.body, /^switchyard_test_total 3$/m);
  });

  test("an unspecified host answers on both families, as Go's listener on 0.0.0.0 does", async () => {
    for (const host of ["0.0.0.0", "::", ""]) {
      const server = new ComponentServer({ host, port: 0, registry: new Registry() });
      servers.push(server);
      const { port } = await server.start();
      for (const loopback of ["127.0.0.1", "[::1]"]) {
        const res = await fetch(`http://${loopback}:${port}/healthz`);
        assert.equal(await res.text(), "ok", `${host} via ${loopback}`);
      }
    }
  });

  test("a given address binds only that address", async () => {
    const server = new ComponentServer({ host: "127.0.0.1", port: 0, registry: new Registry() });
    servers.push(server);
    const { port } = await server.start();
    await assert.rejects(fetch(`http://[::1]:${port}/healthz`));
  });

  test("health endpoints say ok, and list checks with ?verbose", async () => {
    const { server, get } = await started();
    server.addReadinessCheck("informers-synced", () => undefined);
    for (const path of ["/healthz", "/livez", "/readyz"])
      assert.deepEqual(await get(path), { status: 200, body: "ok" });
    const verbose = await get("/readyz?verbose");
    assert.equal(verbose.body, "[+]ping ok\n[+]informers-synced ok\nreadyz check passed\n");
  });

  test("a failing readiness check fails /readyz only, and can be excluded", async () => {
    const { server, get } = await started();
    let synced = false;
    server.addReadinessCheck("informers-synced", () => {
      if (!synced) throw new Error("not synced");
    });
    assert.equal((await get("/livez")).status, 200);
    const ready = await get("/readyz");
    assert.equal(ready.status, 500);
    assert.equal(
      ready.body,
      "[+]ping ok\n[-]informers-synced failed: reason withheld\nreadyz check failed\n",
    );
    assert.equal((await get("/readyz?exclude=informers-synced")).status, 200);
    assert.equal((await get("/readyz/informers-synced")).status, 500);
    assert.equal((await get("/readyz/nope")).status, 404);
    synced = true;
    assert.deepEqual(await get("/readyz"), { status: 200, body: "ok" });
  });

  test("a failing liveness check fails every health endpoint", async () => {
    const { server, get } = await started();
    server.addLivenessCheck("sync-loop", async () => {
      throw new Error("stuck");
    });
    for (const path of ["/healthz", "/livez", "/readyz"]) assert.equal((await get(path)).status, 500);
  });

  test("a taken port fails with one line naming the address", async () => {
    const { address } = await started();
    const second = new ComponentServer({ port: address.port, registry: new Registry() });
    await assert.rejects(second.start(), {
      message: `cannot serve metrics/health on 127.0.0.1:${address.port}: address already in use`,
    });
  });
});
