// The metrics and healthz listeners against ports really taken on loopback: upstream retries a server that
// cannot bind every 5 s (here 50 ms, injected) unless bindAddressHardFail, which makes it fatal.
import assert from "node:assert/strict";
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:net";
import { test } from "node:test";
import { Logger, realClock } from "@switchyard/kube";
import { ProxyHealth } from "@switchyard/proxier";
import { Registry } from "prom-client";
import { startServers } from "../src/servers.js";

async function takenPort(): Promise<{ port: number; blocker: Server }> {
  const blocker = createServer();
  await new Promise<void>((r) => blocker.listen(0, "127.0.0.1", r));
  return { port: (blocker.address() as AddressInfo).port, blocker };
}

const options = (port: number, hardFail: boolean, log: { text: string }) => ({
  metricsBindAddress: `127.0.0.1:${port}`,
  healthzBindAddress: "",
  registry: new Registry(),
  health: new ProxyHealth({ clock: realClock, healthTimeoutMs: 60_000 }),
  mode: "nftables" as const,
  bindAddressHardFail: hardFail,
  logger: new Logger({ level: "info", out: { write: (s: string) => (log.text += s) } }),
  retryMs: 50,
});

test("a taken metrics port is logged and retried until it frees, then served", async () => {
  const { port, blocker } = await takenPort();
  const log = { text: "" };
  const servers = await startServers(options(port, false, log));
  try {
    assert.match(log.text, /Metrics server failed/);
    assert.match(log.text, /EADDRINUSE/);
    assert.equal(servers.metricsAddress, `127.0.0.1:${port}`, "the configured address while retrying");
    await new Promise<void>((r) => blocker.close(() => r()));
    let mode = "";
    for (let i = 0; i < 100 && mode !== "nftables"; i++) {
      await new Promise((r) => setTimeout(r, 50));
      mode = await fetch(`http://127.0.0.1:${port}/proxyMode`).then(
        (r) => r.text(),
        () => "",
      );
    }
    assert.equal(mode, "nftables", "served once the port was free");
  } finally {
    await servers.stop();
  }
});

test("with bindAddressHardFail a taken port is fatal: one line naming the address", async () => {
  const { port, blocker } = await takenPort();
  try {
    await assert.rejects(
      startServers(options(port, true, { text: "" })),
      new RegExp(`^Error: cannot serve metrics on 127\\.0\\.0\\.1:${port}: .*EADDRINUSE`),
    );
  } finally {
    blocker.close();
  }
});

test("/configz serves the configuration under kubeproxy.config.k8s.io, as component-base's configz does", async () => {
  const log = { text: "" };
  const servers = await startServers({
    ...options(0, false, log),
    configz: { kind: "KubeProxyConfiguration", mode: "nftables" },
  });
  try {
    const res = await fetch(`http://${servers.metricsAddress}/configz`);
    assert.equal(res.headers.get("content-type"), "application/json");
    assert.deepEqual(await res.json(), {
      "kubeproxy.config.k8s.io": { kind: "KubeProxyConfiguration", mode: "nftables" },
    });
  } finally {
    await servers.stop();
  }
});
