// Random and mutated packets against one resolver process, over UDP and TCP. It must stay up, every
// reply must decode, and its RSS must not keep growing. FUZZ_PACKETS sets the count (default 200000),
// FUZZ_SEED replays a run.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as dgram from "node:dgram";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { drive } from "../../src/testing/fuzz/drive.js";
import { decodeMessage } from "../../src/wire/decode.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { newQuery } from "../../src/wire/message.js";

const TOTAL = Number(process.env.FUZZ_PACKETS ?? 200_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const here = dirname(fileURLToPath(import.meta.url));

interface Stats {
  rss: number;
  heapUsed: number;
}

test(`fuzz: ${TOTAL} packets over UDP and TCP (seed ${SEED})`, {
  timeout: Math.max(180_000, TOTAL),
}, async (t) => {
  const child = spawn(process.execPath, ["--expose-gc", "--import", "tsx", join(here, "server.ts")], {
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = createInterface({ input: child.stdout as NodeJS.ReadableStream });
  const nextLine = () => new Promise<string>((resolve) => lines.once("line", resolve));
  const port = (JSON.parse(await nextLine()) as { port: number }).port;
  const stats = async (): Promise<Stats> => {
    const line = nextLine();
    child.stdin?.write("stats\n");
    return JSON.parse(await line) as Stats;
  };
  let warm: Stats | undefined;
  const warmAt = Math.floor(TOTAL * 0.1);
  try {
    const { sent, replies, lostSentinels, malformed } = await drive({
      port,
      total: TOTAL,
      seed: SEED,
      afterBatch: async (n) => {
        if (!warm && n >= warmAt) warm = await stats();
        assert.equal(child.exitCode, null, "the server is still running");
      },
    });

    const end = await stats();
    const start = warm ?? end;
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
    t.diagnostic(
      `sent ${sent}, replies ${replies}, lost sentinels ${lostSentinels}; after warm-up RSS ${mib(start.rss)} heap ${mib(start.heapUsed)}, at the end RSS ${mib(end.rss)} heap ${mib(end.heapUsed)}`,
    );
    assert.deepEqual(malformed.slice(0, 5), [], `${malformed.length} replies did not decode`);
    // Every valid query after a batch of garbage is answered: the garbage never wedges a socket or a worker.
    assert.equal(lostSentinels, 0, "sentinels without an answer within 5 s");
    assert.ok(replies > sent / 4, `only ${replies} replies to ${sent} packets`);
    // Generous: the cache may fill up to its capacity (~10k entries) with mutants' names, and V8 keeps
    // freed pages for a while; a leak of even 100 bytes a packet would exceed both.
    assert.ok(
      end.heapUsed - start.heapUsed < 48 * 2 ** 20,
      `heap grew from ${mib(start.heapUsed)} to ${mib(end.heapUsed)}`,
    );
    assert.ok(end.rss - start.rss < 128 * 2 ** 20, `RSS grew from ${mib(start.rss)} to ${mib(end.rss)}`);
    const final = await new Promise<Buffer>((resolve) => {
      const sock = dgram.createSocket("udp4");
      sock.on("message", (m) => {
        sock.close();
        resolve(m);
      });
      sock.send(encodeMessage(newQuery("svc1.testns.svc.cluster.local.", 1, 7)), port, "127.0.0.1");
    });
    const d = decodeMessage(final);
    assert.ok(d.kind === "message" && d.message.answer.some((rr) => rr.data === "172.30.0.10"));
  } finally {
    child.kill("SIGKILL");
  }
});
