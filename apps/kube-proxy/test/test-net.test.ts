// The test network's guard: a host /30 that a link left by an interrupted run still routes is refused at once,
// naming the route, instead of building a node whose API forwarder cannot be reached. And its probes run beside the
// forwarder: a probe of connections nobody answers must not stall the node's traffic to the apiserver.
import assert from "node:assert/strict";
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, test } from "node:test";
import { promisify } from "node:util";
import { missingKernelTools, Net, NODE_IP } from "../src/testing/index.js";

const skip = missingKernelTools(["ip"]);
const SUBNET = 251;
const LINK = `sytn${process.pid % 10000}`;

describe("the test network", { skip }, () => {
  test("refuses a host network another link still routes, and builds nothing", async () => {
    execFileSync("ip", ["link", "add", LINK, "type", "veth", "peer", "name", `${LINK}p`]);
    try {
      execFileSync("ip", ["addr", "add", `169.254.${SUBNET}.1/30`, "dev", LINK]);
      // Up, as a leftover link is: a down link's address puts no route in the table.
      execFileSync("ip", ["link", "set", LINK, "up"]);
      const net = new Net(`sytn${process.pid % 10000}`, SUBNET);
      await assert.rejects(
        net.build([]),
        new RegExp(`169\\.254\\.${SUBNET}\\.0/30 is routed already \\(.*dev ${LINK}`),
      );
      const namespaces = execFileSync("ip", ["netns", "list"], { encoding: "utf8" });
      assert.ok(!namespaces.includes(net.node), `${net.node} was made`);
    } finally {
      execFileSync("ip", ["link", "del", LINK]);
    }
  });

  test("a probe that waits on unanswered connects leaves the forwarder relaying", async () => {
    // The forwarder's upstream is an echo server; the node sends a line through it while a probe from the client
    // waits on connects to an address that never answers (a documentation address, dropped by the node).
    const echo = createServer((s) => s.pipe(s));
    await new Promise<void>((r) => echo.listen(0, "127.0.0.1", r));
    const dir = mkdtempSync(join(tmpdir(), "sytn-"));
    const net = new Net(`sytp${process.pid % 10000}`, SUBNET - 1);
    try {
      await net.build([]);
      writeFileSync(join(dir, "kubeconfig"), "clusters:\n- cluster:\n    server: https://127.0.0.1:1\n");
      const port = (echo.address() as { port: number }).port;
      const kubeconfig = await net.kubeconfigFor(join(dir, "kubeconfig"), `https://127.0.0.1:${port}`);
      const [, host, fwdPort] =
        /server: https:\/\/([\d.]+):(\d+)/.exec(execFileSync("cat", [kubeconfig], { encoding: "utf8" })) ??
        [];
      net.in(net.client, ["ip", "route", "add", "192.0.2.0/24", "via", NODE_IP]);
      net.in(net.node, ["ip", "route", "add", "blackhole", "192.0.2.0/24"]);
      const began = Date.now();
      const probe = net.probe("192.0.2.1", 80, 2, net.client, 1500).then(() => Date.now() - began);
      const { stdout } = await promisify(execFile)("ip", [
        ...["netns", "exec", net.node, "bash", "-c"],
        `exec 3<>/dev/tcp/${host}/${fwdPort}; echo through >&3; read -t 5 l <&3; echo "$l"`,
      ]);
      const relayedAfter = Date.now() - began;
      assert.equal(stdout.trim(), "through");
      const probeTook = await probe;
      assert.ok(probeTook >= 2500, `the probe waited on both connects (${probeTook} ms)`);
      assert.ok(
        relayedAfter < probeTook,
        `relayed after ${relayedAfter} ms, before the probe ended (${probeTook} ms)`,
      );
    } finally {
      await net.destroy();
      echo.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
