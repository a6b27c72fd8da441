// The ports tests hand to their servers: outside the kernel's ephemeral range (apps/cluster-dns/test/dig-own-port
// shows why), and free for TCP and UDP when picked.
import assert from "node:assert/strict";
import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { createServer } from "node:net";
import { test } from "node:test";
import { freeControlPlanePorts, freePort, serverPortBand } from "../src/controlplane/ports.js";

test("the band is 20000-29999 less the ephemeral range, or nothing when the range covers it", () => {
  assert.deepEqual(serverPortBand([32768, 60999]), [20_000, 29_999]);
  assert.deepEqual(serverPortBand([1024, 19_999]), [20_000, 29_999]);
  assert.deepEqual(serverPortBand([25_000, 60999]), [20_000, 24_999]);
  assert.deepEqual(serverPortBand([10_000, 24_999]), [25_000, 29_999]);
  assert.equal(serverPortBand([1024, 65535]), undefined);
  assert.equal(serverPortBand([20_000, 29_999]), undefined);
});

test("freePort: outside this machine's ephemeral range, and a server can bind it for TCP and UDP", async () => {
  const [low = 0, high = 0] = readFileSync("/proc/sys/net/ipv4/ip_local_port_range", "utf8")
    .trim()
    .split(/\s+/)
    .map(Number);
  for (let i = 0; i < 20; i++) {
    const port = await freePort();
    assert.ok(port < low || port > high, `${port} lies in ${low}-${high}`);
    const tcp = createServer();
    await new Promise<void>((resolve, reject) => {
      tcp.once("error", reject);
      tcp.listen({ host: "127.0.0.1", port, exclusive: true }, resolve);
    });
    const udp = createSocket("udp4");
    await new Promise<void>((resolve, reject) => {
      udp.once("error", reject);
      udp.bind({ address: "127.0.0.1", port, exclusive: true }, resolve);
    });
    await new Promise((r) => udp.close(() => r(undefined)));
    await new Promise((r) => tcp.close(r));
  }
});

test("freePort passes over a port whose UDP side is taken", async () => {
  const [taken, next] = [await freePort(), await freePort()];
  const [low] = serverPortBand([32768, 60999]) ?? [0];
  const udp = createSocket("udp4");
  await new Promise<void>((resolve) =>
    udp.bind({ address: "127.0.0.1", port: taken, exclusive: true }, resolve),
  );
  try {
    // The draws land on taken, then on next (the middle of each port's share of [0, 1)).
    const draws = [taken, next].map((port) => (port - low + 0.5) / 10_000);
    assert.equal(await freePort("127.0.0.1", () => draws.shift() ?? 0), next);
  } finally {
    await new Promise((r) => udp.close(() => r(undefined)));
  }
});

test("freePort passes over ports handed out and not bound yet; a control plane's five are apart", async () => {
  const [first, second] = [await freePort(), await freePort()];
  const [low] = serverPortBand([32768, 60999]) ?? [0];
  // The draws land on first (free on the host, but handed out), then on second.
  const draws = [first, second].map((port) => (port - low + 0.5) / 10_000);
  assert.equal(await freePort("127.0.0.1", () => draws.shift() ?? 0, new Set([first])), second);
  const ports = Object.values(await freeControlPlanePorts());
  assert.equal(new Set(ports).size, 5, ports.join(" "));
});
