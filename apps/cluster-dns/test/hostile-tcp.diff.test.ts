import assert from "node:assert/strict";
import * as dgram from "node:dgram";
import * as net from "node:net";
import { after, before, describe, test } from "node:test";
import { resolveBinary } from "@switchyard/testbed/upstream";
import {
  BIN,
  differentialSkip,
  type Pair,
  type Server,
  startPair,
  startServer,
  stopServer,
} from "../src/testing/differential.js";
import {
  openFileLimit,
  pipelineWithoutReading,
  rssBytes,
  samplePeakRss,
  slowClients,
  tcpQueryOnce,
} from "../src/testing/hostile-clients.js";

// Hostile clients against switchyard-dns and CoreDNS v1.14.7 side by side (issue 32): a client that pipelines
// TCP queries and never reads must cost our server bounded memory and not stop it answering others; 1200
// clients that send a byte a second must not lock a normal TCP query out; a port already taken must end
// the process with one line naming the address, as it ends CoreDNS. The figures are printed; the bench
// (bench/resolver-hostile-tcp.bench.ts) measures them at full size.
const skip = differentialSkip();

const COREFILE = `.:{{PORT}} {
    hosts {
        10.0.0.1 a.example.org
        fallthrough
    }
    whoami
}
`;
const MiB = 1024 * 1024;
const SLOW_CLIENTS = 1200;

const servers = (pair: Pair) => [pair.ours, pair.coredns] as const;
const pid = (s: Server) => s.child.pid as number;

describe("hostile TCP clients, against CoreDNS v1.14.7", { skip }, () => {
  let pair: Pair;
  before(async () => {
    // Both servers' sockets and the test's own: 1200 slow clients against each of the two servers.
    const needed = 2 * SLOW_CLIENTS + 200;
    assert.ok(openFileLimit() >= needed, `ulimit -n must allow ${needed} open files (raise the hard limit)`);
    pair = await startPair(COREFILE);
  });
  after(() => pair?.stop());

  test("a client that pipelines 1M queries and never reads: bounded memory, others answered, dropped by the write deadline", async () => {
    const results = await Promise.all(
      servers(pair).map(async (s) => {
        const before = rssBytes(pid(s));
        const peak = samplePeakRss(pid(s));
        // Ours must close it (its write deadline is 5 s; the budget leaves room for a slow machine). CoreDNS
        // never does (miekg/dns sets no write deadline): its side only shows what upstream costs.
        const budgetMs = s.name === "ours" ? 40_000 : 8000;
        const attack = pipelineWithoutReading(s.port, s.host, 1_000_000, budgetMs);
        // Once the attacker's connection has stalled, another client is still answered.
        await new Promise((r) => setTimeout(r, 2000));
        const other = await tcpQueryOnce(s.port, s.host, 4242, "a.example.org", 5000);
        const done = await attack;
        return { name: s.name, growth: peak.stop() - before, other, ...done };
      }),
    );
    for (const r of results)
      console.log(
        `# ${r.name}: RSS +${(r.growth / MiB).toFixed(1)} MiB, ${r.written} queries written in ${r.ms} ms,` +
          ` ${r.closedByServer ? "closed by the server" : "still open"}; other client answered in ${r.other?.toFixed(1)} ms`,
      );
    const [ours, coredns] = results;
    assert.ok(coredns?.other !== undefined, "CoreDNS answered the other client");
    assert.ok(ours?.other !== undefined, "ours answered the other client");
    // The server reads no further than it answers, so the attacker costs what answering the ~200k queries that
    // fit in the kernel's buffers costs. That is garbage, not data kept: the V8 heap stays under 20 MB through
    // the attack (--trace-gc), and the growth is the anonymous memory of reply buffers and read chunks not yet
    // freed when the peak is sampled (code pages add under 2 MiB). So it moves with GC timing: 16-33 MiB here in
    // runs alone, beside CI and under four busy loops, and once +52.7 MiB in a CI run (2026-12-06). The bound
    // sits above that spread and far below a server that reads everything (+168 MiB for 300k queries before the
    // hardening, +481 MiB for 1M in bench/results/resolver-hostile-tcp.md).
    assert.ok(ours.growth < 80 * MiB, `ours grew ${(ours.growth / MiB).toFixed(1)} MiB`);
    assert.ok(ours.closedByServer, "ours dropped the connection that stopped reading");
  });

  test("1200 clients sending a byte a second do not lock out a normal TCP query", async () => {
    const attacks = servers(pair).map((s) => ({ s, clients: slowClients(s.port, s.host, SLOW_CLIENTS) }));
    try {
      // All connected (ramp-up is about 1.2 s), most with a partial query waiting.
      await new Promise((r) => setTimeout(r, 2500));
      const latencies = await Promise.all(
        attacks.map(async ({ s }) => {
          const ms: (number | undefined)[] = [];
          for (let id = 1; id <= 5; id++)
            ms.push(await tcpQueryOnce(s.port, s.host, id, "a.example.org", 5000));
          return { name: s.name, ms };
        }),
      );
      for (const { name, ms } of latencies)
        console.log(
          `# ${name}: normal queries under ${SLOW_CLIENTS} slow clients: ${ms.map((m) => m?.toFixed(1)).join(", ")} ms`,
        );
      for (const { name, ms } of latencies)
        assert.ok(
          ms.every((m) => m !== undefined),
          `${name} left a normal query unanswered: ${ms.join(", ")}`,
        );
    } finally {
      for (const { clients } of attacks) clients.stop();
    }
  });
});

/** Runs a server on a Corefile whose port is taken; its exit code and the lines it printed. */
async function refusal(name: Server["name"], command: string[], corefile: string, args: string[] = []) {
  const s = await startServer(name, command, corefile, {}, args, "127.0.0.1");
  try {
    let timer: NodeJS.Timeout | undefined;
    const code = await Promise.race([
      new Promise<number | null>((r) => s.child.once("exit", (c) => r(c))),
      new Promise<string>((r) => {
        timer = setTimeout(() => r("still running after 15 s"), 15_000);
      }),
    ]);
    clearTimeout(timer);
    const lines = s
      .output()
      .trim()
      .split("\n")
      .filter((l) => !l.startsWith("maxprocs:"));
    return { code, lines };
  } finally {
    await stopServer(s);
  }
}

describe("a DNS port already taken, against CoreDNS v1.14.7", { skip }, () => {
  for (const protocol of ["udp", "tcp"] as const)
    test(`${protocol}: exit 1 with CoreDNS's one line naming the address, with -workers 1 and 2`, async () => {
      const taker = await takePort(protocol);
      try {
        // health opens a listener before the DNS one fails: it must not keep the process running.
        const corefile = `.:${taker.port} {\n    health 127.0.0.1:{{FREE1}}\n    whoami\n}\n`;
        const coredns = await refusal("coredns", [resolveBinary("coredns").path as string], corefile);
        const expected = protocol === "udp" ? "ListenPacket: listen udp" : "Listen: listen tcp";
        assert.deepEqual(coredns, {
          code: 1,
          lines: [`${expected} :${taker.port}: bind: address already in use`],
        });
        for (const workers of ["1", "2"]) {
          const ours = await refusal("ours", [process.execPath, BIN], corefile, ["-workers", workers]);
          assert.deepEqual(
            ours,
            { code: 1, lines: [`switchyard-dns: ${coredns.lines[0]}`] },
            `-workers ${workers}`,
          );
        }
      } finally {
        taker.close();
      }
    });
});

/**
 * Holds a port on every address for one protocol, as another program would, at a number the other protocol has
 * free: the kernel picks the number for one protocol only, and an outgoing connection of anything else on the
 * machine may hold it for the other, which would make the servers fail on the wrong listener.
 */
async function takePort(protocol: "udp" | "tcp"): Promise<{ port: number; close(): void }> {
  for (let attempt = 0; ; attempt++) {
    const held = await holdPort(protocol, 0);
    const other = await holdPort(protocol === "udp" ? "tcp" : "udp", held.port).catch((err: Error) => err);
    if (!(other instanceof Error)) {
      other.close();
      return held;
    }
    held.close();
    if (attempt === 20) throw new Error(`no port free for both protocols after 20 tries: ${other.message}`);
  }
}

/** Binds `port` (0: any) on every address for one protocol; rejects when it is taken. */
async function holdPort(protocol: "udp" | "tcp", port: number): Promise<{ port: number; close(): void }> {
  if (protocol === "udp") {
    const sock = dgram.createSocket("udp6");
    await new Promise<void>((resolve, reject) => {
      sock.once("error", (err) => {
        sock.close();
        reject(err);
      });
      sock.bind(port, "::", () => resolve());
    });
    return { port: sock.address().port, close: () => sock.close() };
  }
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "::", () => resolve());
  });
  const address = server.address() as net.AddressInfo;
  return { port: address.port, close: () => server.close() };
}
