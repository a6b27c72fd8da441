// --init-only without a kernel or a real API server: a local plain-http server reached through
// --master serves the Node, the sysctls go to a fake /proc, and the only request is that Node read.
import assert from "node:assert/strict";
import { once } from "node:events";
import { createServer } from "node:http";
import { test } from "node:test";
import { type SettingFiles, settingPath } from "@switchyard/proxier";
import { initOnlyAndExit } from "../src/app.js";
import { defaultConfig, resolve } from "../src/config/config.js";

const silent = { info() {}, warn() {}, error() {}, debug() {}, child: () => silent } as never;

test("--init-only reads the Node through --master, writes the sysctls, starts nothing else", async () => {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    res.setHeader("content-type", "application/json");
    res.end(JSON.stringify({ kind: "Node", apiVersion: "v1", metadata: { name: "node1" } }));
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const port = (server.address() as { port: number }).port;
  const files = new Map([[settingPath("net.netfilter.nf_conntrack_tcp_timeout_close_wait"), "60"]]);
  const settingFiles: SettingFiles = {
    read: async (p) => files.get(p) ?? "0",
    write: async (p, v) => void files.set(p, v),
  };
  const c = defaultConfig();
  c.mode = "nftables";
  c.hostnameOverride = "node1";
  c.conntrack.maxPerCore = 0;
  try {
    await initOnlyAndExit(resolve(c), {
      logger: silent,
      master: `127.0.0.1:${port}`,
      exec: async () => ({ code: 0, stdout: "", stderr: "" }),
      settingFiles,
      numCPU: 1,
    });
  } finally {
    server.close();
  }
  assert.deepEqual(requests, ["GET /api/v1/nodes/node1"]);
  assert.equal(files.get(settingPath("net.netfilter.nf_conntrack_tcp_timeout_close_wait")), "3600");
});
