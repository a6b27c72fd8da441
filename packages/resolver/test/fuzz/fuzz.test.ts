// Random and mutated packets against one resolver process, over UDP and TCP. It must stay up, every
// reply must decode, and its RSS must not keep growing. FUZZ_PACKETS sets the count (default 200000),
// FUZZ_SEED replays a run.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import * as dgram from "node:dgram";
import * as net from "node:net";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import { FrameSplitter, frame } from "../../src/server/frames.js";
import { decodeMessage } from "../../src/wire/decode.js";
import { encodeMessage } from "../../src/wire/encode.js";
import { newQuery } from "../../src/wire/message.js";
import { mutant, prng, seeds } from "./mutate.js";

const TOTAL = Number(process.env.FUZZ_PACKETS ?? 200_000);
const SEED = Number(process.env.FUZZ_SEED ?? Date.now() % 2 ** 31);
const BATCH = 100;
const here = dirname(fileURLToPath(import.meta.url));

interface Stats {
  rss: number;
  heapUsed: number;
}

function sentinel(id: number): { id: number; name: string; wire: Buffer } {
  const name = `sentinel-${id}.example.`;
  return { id, name, wire: encodeMessage(newQuery(name, 1, id)) };
}

/** Checks one reply; returns what is wrong with it, and whether it answers `expect`. */
function check(reply: Buffer, expect: { id: number; name: string }): { bad?: string; matches: boolean } {
  const d = decodeMessage(reply);
  if (d.kind !== "message") return { bad: `${d.kind}: ${reply.toString("hex")}`, matches: false };
  const q = d.message.question[0];
  return { matches: d.message.id === expect.id && q?.name === expect.name };
}

test(`fuzz: ${TOTAL} packets over UDP and TCP (seed ${SEED})`, { timeout: 180_000 }, async (t) => {
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
  const rnd = prng(SEED);
  const bases = seeds();
  const malformed: string[] = [];
  let replies = 0;
  let lostSentinels = 0;
  let sent = 0;
  let warm: Stats | undefined;
  const warmAt = Math.floor(TOTAL * 0.1);
  const noteProgress = async () => {
    if (!warm && sent >= warmAt) warm = await stats();
  };
  try {
    // UDP: a batch of mutants, then a valid sentinel; the sentinel's answer paces the next batch.
    const udp = dgram.createSocket("udp4");
    await new Promise<void>((r) => udp.bind(0, "127.0.0.1", r));
    let waiting: { id: number; name: string; done: () => void } | undefined;
    udp.on("message", (msg) => {
      replies++;
      const c = waiting ? check(msg, waiting) : { matches: false, bad: undefined };
      if (c.bad) malformed.push(c.bad);
      if (c.matches) waiting?.done();
    });
    const udpTotal = Math.floor(TOTAL * 0.75);
    for (let batch = 0; sent < udpTotal; batch++) {
      for (let i = 0; i < BATCH && sent < udpTotal; i++, sent++)
        udp.send(mutant(rnd, bases), port, "127.0.0.1");
      const s = sentinel(batch % 65536);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          lostSentinels++;
          resolve();
        }, 500);
        waiting = {
          ...s,
          done: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        udp.send(s.wire, port, "127.0.0.1");
      });
      await noteProgress();
      assert.equal(child.exitCode, null, "the server is still running");
    }
    udp.close();

    // TCP: framed mutants on one connection per batch; a connection the server closed is replaced.
    for (let batch = 0; sent < TOTAL; batch++) {
      const socket = net.connect(port, "127.0.0.1");
      const splitter = new FrameSplitter();
      const s = sentinel(batch % 65536);
      await new Promise<void>((resolve) => {
        const finish = () => {
          clearTimeout(timer);
          socket.destroy();
          resolve();
        };
        const timer = setTimeout(() => {
          lostSentinels++;
          finish();
        }, 2000);
        socket.on("data", (chunk) => {
          for (const f of splitter.push(chunk)) {
            replies++;
            const c = check(f, s);
            if (c.bad) malformed.push(c.bad);
            if (c.matches) finish();
          }
        });
        socket.on("error", () => undefined);
        socket.on("close", finish);
        const frames: Buffer[] = [];
        for (let i = 0; i < BATCH && sent < TOTAL; i++, sent++) frames.push(frame(mutant(rnd, bases)));
        frames.push(frame(s.wire));
        socket.write(Buffer.concat(frames));
      });
      await noteProgress();
      assert.equal(child.exitCode, null, "the server is still running");
    }

    const end = await stats();
    const start = warm ?? end;
    const mib = (n: number) => `${(n / 2 ** 20).toFixed(1)} MiB`;
    t.diagnostic(
      `sent ${sent}, replies ${replies}, lost sentinels ${lostSentinels}; after warm-up RSS ${mib(start.rss)} heap ${mib(start.heapUsed)}, at the end RSS ${mib(end.rss)} heap ${mib(end.heapUsed)}`,
    );
    assert.deepEqual(malformed.slice(0, 5), [], `${malformed.length} replies did not decode`);
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
