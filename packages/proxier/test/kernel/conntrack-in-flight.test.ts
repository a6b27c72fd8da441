// Why drained entries expire instead of being deleted, in the kernel: a client sends a datagram through a DNATed
// UDP entry that has been answered before (what a new socket does when the kernel gives it an old lookup's port),
// and the reconciler acts on that entry while the answer is on its way. Deleted, the entry takes the translation
// with it: the answer comes back from the endpoint's own address and the client's connected socket never sees it.
// Expired (conntrack -U --timeout), the answer is translated and arrives; then the entry goes by itself.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { after, before, describe, test } from "node:test";
import { inNetns, realExec } from "../../src/apply/exec.js";
import { cleanStaleEntries } from "../../src/conntrack/clean-stale.js";
import { ConntrackCLI, conntrackExpireArgs } from "../../src/conntrack/conntrack.js";
import type { ConntrackFlow } from "../../src/conntrack/flow.js";
import { newProxyMetrics } from "../../src/metrics/metrics.js";
import { silentLogger } from "../../src/proxier/backend.js";
import { buildMaps, makeService, makeSlice, NODE_NAME } from "../../src/testing/fixtures.js";
import { kernelTestsUnavailable } from "./topology.js";

const NS = `sy-kcf${process.pid}`;
const SERVICE = "172.30.0.53";
const ENDPOINT = "10.181.0.1";
const skip = await kernelTestsUnavailable(["nft", "conntrack"]);
if (skip) console.log(`# skipping conntrack in-flight kernel tests: ${skip}`);

// Answers "fast" at once, "slow" after 600 ms and "slower" after 1500 ms, from the endpoint (the DNAT target).
const SERVER = `
const s = require("node:dgram").createSocket("udp4");
const delay = { slow: 600, slower: 1500 };
s.on("message", (m, r) => setTimeout(() => s.send(m, r.port, r.address), delay[String(m)] ?? 0));
s.bind(5353, "${ENDPOINT}", () => console.log("ready"));
`;
// From a fixed source port to the Service: one answered exchange, then on "go" a slow one; prints what came back.
const CLIENT = `
const s = require("node:dgram").createSocket("udp4");
const rl = require("node:readline").createInterface({ input: process.stdin });
s.bind(Number(process.argv[1]), () => s.connect(80, "${SERVICE}", () => s.send("fast")));
s.on("message", (m) => {
  if (String(m) === "fast") return console.log("answered");
  console.log("reply"); process.exit(0);
});
rl.on("line", () => { s.send("slow"); console.log("sent"); setTimeout(() => { console.log("lost"); process.exit(0); }, 2500); });
`;

// A new flow whose first datagram is answered late ("slower"): its entry waits [UNREPLIED] meanwhile.
const WAITING_CLIENT = `
const s = require("node:dgram").createSocket("udp4");
s.bind(Number(process.argv[1]), () => s.connect(80, "${SERVICE}", () => { s.send("slower"); console.log("sent"); }));
s.on("message", () => { console.log("reply"); process.exit(0); });
setTimeout(() => { console.log("lost"); process.exit(0); }, 3000);
`;

const exec = inNetns(NS, realExec);
const table = new ConntrackCLI(exec);

/** Starts `script` in the namespace; resolves with the process and a reader of its next stdout line. */
function start(script: string, args: string[] = []) {
  const child = spawn("ip", ["netns", "exec", NS, process.execPath, "-e", script, ...args], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines: string[] = [];
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on("line", (l) => {
    const w = waiting.shift();
    if (w) w(l);
    else lines.push(l);
  });
  const next = () =>
    new Promise<string>((resolve, reject) => {
      const l = lines.shift();
      if (l !== undefined) return resolve(l);
      const t = setTimeout(() => reject(new Error("no line from the script in 5 s")), 5000);
      waiting.push((line) => {
        clearTimeout(t);
        resolve(line);
      });
    });
  return { child, next };
}

const toService = async (sport: number): Promise<ConntrackFlow[]> =>
  (await table.listUDP("IPv4")).filter((f) => f.orig.dst === SERVICE && f.orig.sport === sport);

describe("a drained entry with a datagram in flight", { skip: skip ?? false }, () => {
  let server: ChildProcess | undefined;
  before(async () => {
    const must = async (cmd: string, args: string[], stdin?: string) => {
      const r = await realExec(cmd, args, stdin === undefined ? {} : { stdin });
      if (r.code !== 0) throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr.trim()}`);
    };
    await must("ip", ["netns", "add", NS]);
    await must("ip", ["-n", NS, "link", "set", "lo", "up"]);
    // An address for the endpoint and a route to the Service's, so the client's socket can connect.
    await must("ip", ["-n", NS, "link", "add", "sy0", "type", "veth", "peer", "name", "sy1"]);
    await must("ip", ["-n", NS, "addr", "add", `${ENDPOINT}/24`, "dev", "sy0"]);
    await must("ip", ["-n", NS, "link", "set", "sy0", "up"]);
    await must("ip", ["-n", NS, "link", "set", "sy1", "up"]);
    await must("ip", ["-n", NS, "route", "add", `${SERVICE}/32`, "dev", "sy0"]);
    const rules = [
      "table ip sy {",
      "  chain out {",
      "    type nat hook output priority -100;",
      `    ip daddr ${SERVICE} udp dport 80 dnat to ${ENDPOINT}:5353`,
      "  }",
      "}",
      "",
    ].join("\n");
    await must("ip", ["netns", "exec", NS, "nft", "-f", "-"], rules);
    const s = start(SERVER);
    server = s.child;
    assert.equal(await s.next(), "ready");
  });
  after(async () => {
    server?.kill();
    await realExec("ip", ["netns", "del", NS]);
  });

  /** One answered exchange from `sport`, then a slow one; `act` runs on the entry while the slow answer is out. */
  async function slowAnswerAfter(sport: number, act: (flows: ConntrackFlow[]) => Promise<unknown>) {
    const client = start(CLIENT, [String(sport)]);
    try {
      assert.equal(await client.next(), "answered");
      const flows = await toService(sport);
      assert.equal(flows.length, 1, "one answered entry to the Service");
      assert.equal(flows[0]?.reply.src, ENDPOINT, "DNATed to the endpoint");
      client.child.stdin?.write("go\n");
      assert.equal(await client.next(), "sent");
      await act(flows);
      return await client.next();
    } finally {
      client.child.kill();
    }
  }

  test("deleting the entry loses the answer (the reason for expiring)", async () => {
    const outcome = await slowAnswerAfter(40061, (flows) => table.delete("IPv4", flows));
    assert.equal(outcome, "lost");
  });

  test("expiring it lets the answer through; with no more traffic the entry then goes by itself", async () => {
    let updated = 0;
    const outcome = await slowAnswerAfter(40062, async (flows) => {
      updated = (await table.expire("IPv4", flows, 1)).deleted;
    });
    assert.equal(updated, 1);
    assert.equal(outcome, "reply");
    // The answer renewed the kernel's timeout (30 s for UDP); shortened again, the entry is gone within seconds.
    assert.equal((await table.expire("IPv4", await toService(40062), 1)).deleted, 1);
    for (const deadline = Date.now() + 5000; (await toService(40062)).length > 0; ) {
      assert.ok(Date.now() < deadline, "the expired entry is still listed after 5 s");
      await new Promise((r) => setTimeout(r, 200));
    }
  });

  /** A flow whose query is still out; `act` runs on its [UNREPLIED] entry; what the client saw. */
  async function waitingAnswerAfter(sport: number, act: (flows: ConntrackFlow[]) => Promise<unknown>) {
    const client = start(WAITING_CLIENT, [String(sport)]);
    try {
      assert.equal(await client.next(), "sent");
      const flows = await toService(sport);
      assert.equal(flows.length, 1);
      assert.equal(flows[0]?.unreplied, true, "the entry waits for its reply");
      await act(flows);
      return await client.next();
    } finally {
      client.child.kill();
    }
  }

  test("conntrack -U --status SEEN_REPLY does not match answered entries: it marks a waiting one answered, and its late answer is lost", async () => {
    const outcome = await waitingAnswerAfter(40063, async (flows) => {
      const f = flows[0];
      assert.ok(f);
      const args = [...conntrackExpireArgs("IPv4", f, 1), "--status", "SEEN_REPLY"];
      const r = await exec("conntrack", args);
      assert.match(r.stderr, /1 flow entries have been updated/);
      const after = await toService(40063);
      assert.equal(after[0]?.unreplied, undefined, "the waiting entry was marked answered");
    });
    assert.equal(outcome, "lost", "the entry expired before the answer, which came back untranslated");
  });

  test("a round leaves an endpoint with a waiting entry alone, its late answer arrives, and the next round shortens it", async () => {
    // The endpoint is terminating and a ready one exists, so the rules no longer choose it: its entries are drained.
    const maps = buildMaps(
      "IPv4",
      [
        makeService("ns1", "dns", {
          clusterIP: SERVICE,
          ports: [{ name: "dns", port: 80, protocol: "UDP" }],
        }),
      ],
      [
        makeSlice(
          "ns1",
          "dns",
          "a",
          [
            { addresses: ["10.181.0.2"], nodeName: NODE_NAME },
            {
              addresses: [ENDPOINT],
              nodeName: NODE_NAME,
              conditions: { ready: false, serving: true, terminating: true },
            },
          ],
          [{ name: "dns", port: 5353, protocol: "UDP" }],
        ),
      ],
    );
    const round = () =>
      cleanStaleEntries({
        table,
        family: "IPv4",
        ...maps,
        metrics: newProxyMetrics("nftables"),
        clock: { now: () => 0 },
        logger: silentLogger,
        drainTerminatingOn: NODE_NAME,
      });
    // An answered entry to the same endpoint: one `conntrack -U` for it covers the waiting one too.
    const answered = start(CLIENT, ["40065"]);
    try {
      assert.equal(await answered.next(), "answered");
      let first: Awaited<ReturnType<typeof round>> | undefined;
      const outcome = await waitingAnswerAfter(40064, async () => {
        first = await round();
      });
      assert.deepEqual(
        first,
        { deleted: 0, expiring: 0, drained: 2 },
        "found one waiting, shortened nothing",
      );
      assert.equal(outcome, "reply", "the late answer came back through its entry");
      // Both answered now: the next round (the proxy's look a second later) gives both their second to live.
      assert.deepEqual(await round(), { deleted: 0, expiring: 2, drained: 2 });
    } finally {
      answered.child.kill();
    }
  });
});
