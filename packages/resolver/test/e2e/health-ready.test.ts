import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { Resolver } from "../../src/resolver.js";
import { dig } from "../helpers/clients.js";
import { fixtureCluster } from "../kubernetes/fixture.js";

const COREFILE = `cluster.local {
    health 127.0.0.1:0 {
       lameduck 5s
    }
    ready 127.0.0.1:0
    kubernetes
}
`;

async function get(port: number, path: string): Promise<{ status: number; body: string } | "refused"> {
  try {
    const res = await fetch(`http://127.0.0.1:${port}${path}`);
    return { status: res.status, body: await res.text() };
  } catch {
    return "refused";
  }
}

describe("health and ready", () => {
  test("ready waits for the cluster; lameduck keeps DNS and /health up while /ready is gone", async () => {
    const cluster = fixtureCluster();
    cluster.synced = false;
    const ports = new Map<string, number>();
    const duringLameduck: unknown[] = [];
    let resolver: Resolver | undefined;
    const sleep = async (ms: number) => {
      assert.equal(ms, 5000);
      const dnsPort = resolver?.servers[0]?.address.port ?? 0;
      duringLameduck.push(
        await get(ports.get("ready") ?? 0, "/ready"),
        await get(ports.get("health") ?? 0, "/health"),
        (await dig(dnsPort, "svc1.testns.svc.cluster.local", "A", "+short")).trim(),
      );
    };
    resolver = Resolver.fromCorefile(COREFILE, {
      env: {},
      deps: { cluster, sleep, onHttpListen: (p, port) => ports.set(p, port) },
      address: "127.0.0.1",
      portOverride: 0,
    });
    await resolver.start();
    assert.deepEqual(await get(ports.get("ready") ?? 0, "/ready"), { status: 503, body: "kubernetes" });
    assert.deepEqual(await get(ports.get("health") ?? 0, "/health"), { status: 200, body: "OK" });
    cluster.synced = true;
    assert.deepEqual(await get(ports.get("ready") ?? 0, "/ready"), { status: 200, body: "OK" });
    await resolver.stop(100);
    assert.deepEqual(duringLameduck, ["refused", { status: 200, body: "OK" }, "172.30.0.10"]);
    assert.equal(await get(ports.get("health") ?? 0, "/health"), "refused");
  });

  test("setup errors", () => {
    const build = (text: string) =>
      Resolver.fromCorefile(text, { env: {}, deps: { cluster: fixtureCluster() } });
    assert.throws(
      () => build(".:53 {\n  health {\n    lameduck soon\n  }\n}\n"),
      /plugin\/health: unable to parse lameduck duration value: 'soon' : time: invalid duration "soon"$/,
    );
    assert.throws(
      () => build(".:53 {\n  ready nowhere\n}\n"),
      /plugin\/ready: Corefile:2 - .*invalid address 'nowhere'/,
    );
  });
});
