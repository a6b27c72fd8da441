// The fuzzer's traffic, for any DNS server on loopback: batches of mutated packets over UDP, then framed over
// TCP, each batch followed by a valid sentinel query whose answer paces the next. Used by fuzz.test.ts (our
// resolver in a child process) and by bench/fuzz.bench.ts (ours and CoreDNS, a million packets each).
import * as dgram from "node:dgram";
import * as net from "node:net";
import { prng } from "@switchyard/kube/testing";
import { FrameSplitter, frame } from "../../server/frames.js";
import { decodeMessage } from "../../wire/decode.js";
import { encodeMessage } from "../../wire/encode.js";
import { newQuery } from "../../wire/message.js";
import { mutant, seeds } from "./mutate.js";

const BATCH = 100;
/** A sentinel not answered within this is lost: long enough that a busy machine is not mistaken for a loss. */
const SENTINEL_WAIT_MS = 5000;

export interface DriveOptions {
  port: number;
  total: number;
  seed: number;
  /** Called after each batch with the packets sent so far; throws to stop the run (the server died). */
  afterBatch?: (sent: number) => Promise<void>;
}

export interface DriveResult {
  sent: number;
  replies: number;
  /** Sentinels not answered within SENTINEL_WAIT_MS (each is a valid query after a batch of mutants). */
  lostSentinels: number;
  /** Replies that did not decode, as hex (the first few are enough to debug). */
  malformed: string[];
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

export async function drive(o: DriveOptions): Promise<DriveResult> {
  const rnd = prng(o.seed);
  const bases = seeds();
  const r: DriveResult = { sent: 0, replies: 0, lostSentinels: 0, malformed: [] };
  await driveUDP(o, r, rnd, bases, Math.floor(o.total * 0.75));
  await driveTCP(o, r, rnd, bases);
  return r;
}

async function driveUDP(
  o: DriveOptions,
  r: DriveResult,
  rnd: () => number,
  bases: Buffer[],
  udpTotal: number,
) {
  const udp = dgram.createSocket("udp4");
  await new Promise<void>((resolve) => udp.bind(0, "127.0.0.1", resolve));
  let waiting: { id: number; name: string; done: () => void } | undefined;
  udp.on("message", (msg) => {
    r.replies++;
    const c = waiting ? check(msg, waiting) : { matches: false, bad: undefined };
    if (c.bad) r.malformed.push(c.bad);
    if (c.matches) waiting?.done();
  });
  try {
    for (let batch = 0; r.sent < udpTotal; batch++) {
      for (let i = 0; i < BATCH && r.sent < udpTotal; i++, r.sent++)
        udp.send(mutant(rnd, bases), o.port, "127.0.0.1");
      const s = sentinel(batch % 65536);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(() => {
          r.lostSentinels++;
          resolve();
        }, SENTINEL_WAIT_MS);
        waiting = {
          ...s,
          done: () => {
            clearTimeout(timer);
            resolve();
          },
        };
        udp.send(s.wire, o.port, "127.0.0.1");
      });
      await o.afterBatch?.(r.sent);
    }
  } finally {
    udp.close();
  }
}

/** Framed mutants on one connection per batch; a connection the server closed is replaced. */
async function driveTCP(o: DriveOptions, r: DriveResult, rnd: () => number, bases: Buffer[]) {
  for (let batch = 0; r.sent < o.total; batch++) {
    const socket = net.connect(o.port, "127.0.0.1");
    const splitter = new FrameSplitter();
    const s = sentinel(batch % 65536);
    // A server may close the connection on a bad frame before the sentinel: that is not a loss.
    await new Promise<void>((resolve) => {
      const finish = () => {
        clearTimeout(timer);
        socket.destroy();
        resolve();
      };
      const timer = setTimeout(() => {
        r.lostSentinels++;
        finish();
      }, SENTINEL_WAIT_MS);
      socket.on("data", (chunk) => {
        for (const f of splitter.push(chunk)) {
          r.replies++;
          const c = check(f, s);
          if (c.bad) r.malformed.push(c.bad);
          if (c.matches) finish();
        }
      });
      socket.on("error", () => undefined);
      socket.on("close", finish);
      const frames: Buffer[] = [];
      for (let i = 0; i < BATCH && r.sent < o.total; i++, r.sent++) frames.push(frame(mutant(rnd, bases)));
      frames.push(frame(s.wire));
      socket.write(Buffer.concat(frames));
    });
    await o.afterBatch?.(r.sent);
  }
}
