// Why the differential tests' servers listen outside the kernel's ephemeral range. dig sets SO_REUSEPORT on its UDP
// sockets and CoreDNS on its listeners, so a dig whose source port the kernel picks can get CoreDNS's own port, and
// then it reads back its own query (a CI run's blackhole test failed so, once in thousands of digs). In a network
// namespace whose ephemeral range is one port, every dig gets that port: with CoreDNS on it, each dig reads its own
// query; with CoreDNS on the port freePort picks there, each dig gets CoreDNS's answer.
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { differentialSkip } from "@switchyard/cluster-dns/testing";
import { resolveBinary } from "@switchyard/testbed/upstream";

const NETNS = `sy-digport-${process.pid}`;
const EPHEMERAL = 40_000;
const skip = process.getuid?.() !== 0 ? "needs root for a network namespace" : differentialSkip();

const inNetns = (command: string[]) =>
  execFileSync("ip", ["netns", "exec", NETNS, ...command], { encoding: "utf8" });

/** CoreDNS in the namespace on `port`, answering whoami; resolves once it has said it listens. */
async function startCoreDns(dir: string, port: number): Promise<ChildProcess> {
  writeFileSync(join(dir, `Corefile.${port}`), `.:${port} {\n    whoami\n}\n`);
  const coredns = resolveBinary("coredns").path ?? "";
  const child = spawn("ip", ["netns", "exec", NETNS, coredns, "-conf", `Corefile.${port}`], {
    cwd: dir,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let text = "";
  await new Promise<void>((resolve, reject) => {
    const look = (b: Buffer) => {
      text += b.toString();
      if (text.includes("CoreDNS-")) resolve();
    };
    child.stdout?.on("data", look);
    child.stderr?.on("data", look);
    child.once("exit", (code) => reject(new Error(`coredns exited ${code}: ${text}`)));
  });
  return child;
}

const digIn = (port: number) =>
  inNetns(["dig", "@127.0.0.1", "-p", String(port), "+time=2", "+tries=1", "who.example."]);

describe("dig against CoreDNS on a port inside and outside the kernel's ephemeral range", { skip }, () => {
  let dir: string;
  const children: ChildProcess[] = [];

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "dig-own-port-"));
    execFileSync("ip", ["netns", "add", NETNS]);
    inNetns(["ip", "link", "set", "lo", "up"]);
    inNetns(["sysctl", "-qw", `net.ipv4.ip_local_port_range=${EPHEMERAL} ${EPHEMERAL}`]);
  });

  after(() => {
    for (const child of children) child.kill("SIGKILL");
    execFileSync("ip", ["netns", "del", NETNS]);
    rmSync(dir, { recursive: true, force: true });
  });

  test("on the one ephemeral port, every dig is bound to CoreDNS's port and reads its own query", async () => {
    children.push(await startCoreDns(dir, EPHEMERAL));
    for (let i = 0; i < 3; i++) {
      const out = digIn(EPHEMERAL);
      assert.match(out, /Warning: query response not set/, out);
      assert.doesNotMatch(out, /flags: qr/, out);
    }
  });

  test("on the port freePort picks in that namespace, every dig gets CoreDNS's answer", async () => {
    const script =
      'import("@switchyard/testbed/controlplane").then(async (m) => console.log(await m.freePort()))';
    const port = Number(inNetns([process.execPath, "--input-type=module", "-e", script]).trim());
    assert.ok(port > 0 && port !== EPHEMERAL, `freePort gave ${port}`);
    children.push(await startCoreDns(dir, port));
    for (let i = 0; i < 3; i++) {
      const out = digIn(port);
      assert.match(out, /flags: qr aa rd;/, out);
      assert.match(out, /status: NOERROR/, out);
    }
  });
});
