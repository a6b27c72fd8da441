import assert from "node:assert/strict";
import { EventEmitter } from "node:events";
import type * as net from "node:net";
import { describe, test } from "node:test";
import { FakeClock, flushAsync } from "@switchyard/kube/testing";
import type { Outcome } from "../../src/server/dispatch.js";
import { frame } from "../../src/server/frames.js";
import { TcpConnection, type TcpHost, type TcpLimits } from "../../src/server/tcp-connection.js";

/**
 * The part of a net.Socket a connection uses. `stuck` plays a client that does not read: what is written
 * stays in the socket's buffer (writableLength) until `drain()`.
 */
class FakeSocket extends EventEmitter {
  readonly written: Buffer[] = [];
  paused = false;
  ended = false;
  destroyed = false;
  stuck = false;
  writableLength = 0;
  private readonly unflushed: (() => void)[] = [];

  write(bytes: Buffer, done: (err?: Error) => void): boolean {
    this.written.push(bytes);
    if (!this.stuck) {
      process.nextTick(done);
      return true;
    }
    this.writableLength += bytes.length;
    this.unflushed.push(done);
    return false;
  }
  drain(): void {
    this.stuck = false;
    this.writableLength = 0;
    for (const done of this.unflushed.splice(0)) done();
  }
  pause(): this {
    this.paused = true;
    return this;
  }
  resume(): this {
    this.paused = false;
    return this;
  }
  end(): void {
    this.ended = true;
  }
  destroy(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    process.nextTick(() => this.emit("close"));
  }
  /** The client sends bytes; a paused socket would not read them, so a test must not send then. */
  send(bytes: Buffer): void {
    assert.equal(this.paused, false, "the client's bytes arrive while the socket is paused");
    this.emit("data", bytes);
  }
}

const LIMITS: TcpLimits = { firstReadMs: 3000, idleMs: 10_000, writeMs: 5000, maxQueries: -1 };

/** A message whose first two bytes (the id) name it; the chain's answer echoes it. */
const msg = (id: number) => Buffer.from([id >> 8, id & 0xff, 1, 2, 3]);

interface Harness {
  socket: FakeSocket;
  clock: FakeClock;
  /** Ids of the messages the chain was asked, in order. */
  asked: number[];
  /** Resolves the chain's answer to the oldest message still waiting for one. */
  answerNext(): void;
  reported: number;
  evictable: boolean;
  closed: boolean;
}

/** A connection whose chain answers only when the test says so (answerNext). */
function connect(limits: Partial<TcpLimits> = {}): Harness & { conn: TcpConnection } {
  const socket = new FakeSocket();
  const clock = new FakeClock();
  const pending: ((o: Outcome) => void)[] = [];
  const h: Harness = {
    socket,
    clock,
    asked: [],
    answerNext: () => pending.shift()?.({ zone: ".", requestSize: 5, duration: 0, reply: Buffer.from("ok") }),
    reported: 0,
    evictable: false,
    closed: false,
  };
  const host: TcpHost = {
    timers: clock,
    answer: (packet) => {
      h.asked.push(packet.readUInt16BE(0));
      return new Promise((resolve) => pending.push(resolve));
    },
    report: () => {
      h.reported++;
    },
    track: () => undefined,
    stopping: () => false,
    evictable: (_c, yes) => {
      h.evictable = yes;
    },
    closed: () => {
      h.closed = true;
    },
  };
  const conn = new TcpConnection(socket as unknown as net.Socket, { ...LIMITS, ...limits }, host);
  return Object.assign(h, { conn });
}

describe("TcpConnection", () => {
  test("reads the next message only after the last reply went out, and keeps their order", async () => {
    const c = connect();
    c.socket.send(Buffer.concat([frame(msg(1)), frame(msg(2)), frame(msg(3))]));
    await flushAsync();
    assert.deepEqual(c.asked, [1], "one message at a time");
    assert.equal(c.socket.paused, true, "paused while whole messages wait");
    c.answerNext();
    await flushAsync();
    assert.deepEqual(c.asked, [1, 2]);
    c.answerNext();
    await flushAsync();
    assert.deepEqual(c.asked, [1, 2, 3]);
    assert.equal(c.socket.paused, false, "reads again once no whole message is buffered");
    c.answerNext();
    await flushAsync();
    assert.equal(c.socket.written.length, 3);
    assert.equal(c.reported, 3);
    assert.equal(c.evictable, true);
  });

  test("a pipelined backlog gives the event loop a turn between messages", async () => {
    const c = connect();
    c.socket.send(Buffer.concat([frame(msg(1)), frame(msg(2))]));
    c.answerNext();
    // Promise callbacks and process.nextTick run; a setImmediate does not.
    for (let i = 0; i < 20; i++) await Promise.resolve();
    await new Promise((r) => process.nextTick(r));
    assert.deepEqual(c.asked, [1]);
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(c.asked, [1, 2]);
  });

  test("the first-read deadline covers the whole message, however its bytes trickle in", async () => {
    const c = connect();
    const bytes = frame(msg(7));
    for (let i = 0; i < 2; i++) {
      c.socket.send(bytes.subarray(i, i + 1));
      await c.clock.advance(1000);
    }
    assert.equal(c.socket.destroyed, false);
    c.socket.send(bytes.subarray(2, 3));
    await c.clock.advance(1000);
    assert.equal(c.socket.destroyed, true, "dropped 3 s after it connected");
    assert.deepEqual(c.asked, []);
    assert.equal(c.closed, true);
  });

  test("the idle deadline counts from the reply, not from the last byte", async () => {
    const c = connect();
    c.socket.send(frame(msg(1)));
    await c.clock.advance(2000);
    c.answerNext();
    await flushAsync();
    assert.deepEqual(c.clock.pendingDelays(), [10_000]);
    await c.clock.advance(9000);
    c.socket.send(frame(msg(2)).subarray(0, 4));
    await c.clock.advance(999);
    assert.equal(c.socket.destroyed, false);
    await c.clock.advance(1);
    assert.equal(c.socket.destroyed, true);
    assert.deepEqual(c.asked, [1]);
  });

  test("a query that takes long to answer is not cut by a read deadline", async () => {
    const c = connect();
    c.socket.send(frame(msg(1)));
    await c.clock.advance(60_000);
    assert.equal(c.socket.destroyed, false);
    assert.equal(c.clock.pendingTimers(), 0);
    c.answerNext();
    await flushAsync();
    assert.equal(c.socket.written.length, 1);
  });

  test("a reply the client does not take within the write deadline drops the connection", async () => {
    const c = connect();
    c.socket.stuck = true;
    c.socket.send(Buffer.concat([frame(msg(1)), frame(msg(2))]));
    c.answerNext();
    await c.clock.advance(4999);
    assert.deepEqual(c.asked, [1], "the next message waits for the reply to go out");
    assert.equal(c.socket.destroyed, false);
    await c.clock.advance(1);
    assert.equal(c.socket.destroyed, true);
    assert.deepEqual(c.asked, [1]);
  });

  test("a reply the client takes late, within the deadline, lets the connection go on", async () => {
    const c = connect();
    c.socket.stuck = true;
    c.socket.send(Buffer.concat([frame(msg(1)), frame(msg(2))]));
    c.answerNext();
    await c.clock.advance(4000);
    c.socket.drain();
    await flushAsync();
    assert.deepEqual(c.asked, [1, 2]);
    await c.clock.advance(5000);
    assert.equal(c.socket.destroyed, false);
  });

  test("after maxQueries it reads no more and closes once the last reply is out", async () => {
    const c = connect({ maxQueries: 2 });
    c.socket.send(Buffer.concat([frame(msg(1)), frame(msg(2)), frame(msg(3))]));
    c.answerNext();
    await flushAsync();
    c.answerNext();
    await flushAsync();
    assert.deepEqual(c.asked, [1, 2]);
    assert.equal(c.socket.ended, true);
    assert.equal(c.socket.destroyed, false);
    // A client that never closes its side is dropped after the write deadline.
    await c.clock.advance(5000);
    assert.equal(c.socket.destroyed, true);
  });

  test("a client that sends its FIN after its queries still gets every reply, then the connection ends", async () => {
    const c = connect();
    c.socket.send(Buffer.concat([frame(msg(1)), frame(msg(2)), frame(msg(3)).subarray(0, 3)]));
    c.socket.emit("end");
    for (let i = 0; i < 2; i++) {
      c.answerNext();
      await flushAsync();
    }
    assert.deepEqual(c.asked, [1, 2], "the incomplete third is dropped");
    assert.equal(c.socket.written.length, 2);
    assert.equal(c.socket.ended, true);
  });

  test("only whole messages wait: a paused connection holds one message and the start of the next", async () => {
    const c = connect();
    const big = Buffer.alloc(60_000, 1);
    c.socket.send(Buffer.concat([frame(msg(1)), frame(big).subarray(0, 30_000)]));
    await flushAsync();
    assert.equal(c.socket.paused, false, "an incomplete message does not pause the socket");
    c.socket.send(frame(big).subarray(30_000));
    await flushAsync();
    assert.equal(c.socket.paused, true);
    c.answerNext();
    await flushAsync();
    assert.equal(c.asked.length, 2);
    assert.equal(c.socket.paused, false);
  });
});
