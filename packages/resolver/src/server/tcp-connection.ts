import type * as net from "node:net";
import type { Outcome } from "./dispatch.js";
import { FrameSplitter, frame } from "./frames.js";
import type { Timers } from "./timers.js";

/** The deadlines and the query budget of one TCP connection, fixed when it is accepted. */
export interface TcpLimits {
  /** How long a new connection may take to deliver its first whole message. */
  firstReadMs: number;
  /** How long each later message may take, counted from the moment the previous reply went out. */
  idleMs: number;
  /** How long a reply may wait for the kernel to take it before the connection is dropped. */
  writeMs: number;
  /** Messages read before the connection closes; -1 for no limit. */
  maxQueries: number;
}

/** What a connection needs from its server. */
export interface TcpHost {
  timers: Timers;
  /** Runs one message through the chain. */
  answer(packet: Buffer): Promise<Outcome>;
  /** After its reply (if any) was handed to the socket. */
  report(out: Outcome): void;
  /** Counts work the server's stop() waits for. */
  track(work: Promise<void>): void;
  stopping(): boolean;
  /**
   * Whether the connection may be closed to make room for a new one: true while it waits for a message or
   * is closing (nothing it was asked is lost then), false while it answers.
   */
  evictable(conn: TcpConnection, yes: boolean): void;
  closed(conn: TcpConnection): void;
}

type State = "reading" | "answering" | "writing" | "closing";

/**
 * One DNS-over-TCP connection, served as miekg/dns serves one: read a whole message, answer it, hand the
 * reply to the kernel, only then read the next. Pipelined queries are thus answered in order, and a client
 * that sends faster than it reads is held back by TCP flow control instead of by the server's memory: the
 * socket is paused while a whole message waits its turn. A connection so holds at most the message being
 * answered, one reply, the bytes read up to the next whole message (each under 64 KiB) and Node's read
 * buffer (64 KiB). Each message has one read deadline however its bytes trickle in, and each reply a write
 * deadline.
 */
export class TcpConnection {
  private state: State = "reading";
  private timer: unknown;
  private taken = 0;
  /** The client has sent all it will (its FIN came): the queries before it are still answered. */
  private peerEnded = false;
  private readonly frames = new FrameSplitter();

  constructor(
    readonly socket: net.Socket,
    private readonly limits: TcpLimits,
    private readonly host: TcpHost,
  ) {
    socket.on("data", (chunk: Buffer) => this.received(chunk));
    socket.on("end", () => {
      this.peerEnded = true;
      if (this.state === "reading") this.readNext();
    });
    socket.on("error", () => socket.destroy());
    socket.on("close", () => {
      this.host.timers.clearTimeout(this.timer);
      this.host.closed(this);
    });
    this.awaitMessage(limits.firstReadMs);
  }

  /** Between messages: nothing of its own is lost if it is closed now. */
  get idle(): boolean {
    return this.state === "reading";
  }

  /** Closes at once (a deadline passed, or its place is needed). */
  drop(): void {
    this.state = "closing";
    this.host.timers.clearTimeout(this.timer);
    this.host.evictable(this, false);
    this.socket.destroy();
  }

  /**
   * Closes after what was written has gone out (TCP's FIN follows the last reply); a client that does not
   * read it within the write deadline is dropped.
   */
  finish(): void {
    if (this.state === "closing") return;
    this.state = "closing";
    this.host.evictable(this, true);
    this.arm(this.limits.writeMs, () => this.socket.destroy());
    // Read (and ignore) the rest, so the client's own close is seen and ends the connection at once.
    this.socket.resume();
    this.socket.end();
  }

  private get spent(): boolean {
    return this.limits.maxQueries >= 0 && this.taken >= this.limits.maxQueries;
  }

  private received(chunk: Buffer): void {
    if (this.state === "closing") return;
    this.frames.append(chunk);
    if (this.state === "reading") this.readNext();
    // A whole message waits its turn: read no more until it is taken.
    else if (this.frames.complete) this.socket.pause();
  }

  /** Waits for the next whole message, `ms` at most from now, unless one is buffered already. */
  private awaitMessage(ms: number): void {
    this.state = "reading";
    if (this.readNext()) return;
    this.arm(ms, () => this.drop());
    this.host.evictable(this, true);
  }

  /** Takes the next message if it is whole and answers it; false while it is still incomplete. */
  private readNext(): boolean {
    if (this.host.stopping() || this.spent) {
      this.finish();
      return true;
    }
    const packet = this.frames.take();
    if (!packet && this.peerEnded) {
      // As miekg/dns on EOF: no more messages (the start of one that never completed is dropped).
      this.finish();
      return true;
    }
    if (!packet) {
      this.socket.resume();
      return false;
    }
    this.host.timers.clearTimeout(this.timer);
    this.host.evictable(this, false);
    if (this.frames.complete) this.socket.pause();
    else this.socket.resume();
    this.state = "answering";
    this.taken++;
    this.host.track(this.answer(packet));
    return true;
  }

  private async answer(packet: Buffer): Promise<void> {
    const out = await this.host.answer(packet);
    if (this.socket.destroyed) {
      this.state = "closing";
      this.host.report(out);
      return;
    }
    const unsent = out.reply ? this.write(frame(out.reply)) : false;
    this.host.report(out);
    if (!unsent && this.state === "answering") this.replied();
  }

  /**
   * Hands a reply to the socket. True when the kernel has not taken all of it yet: the connection goes on
   * once it has, or is dropped at the write deadline.
   */
  private write(bytes: Buffer): boolean {
    let settled = false;
    this.socket.write(bytes, (err) => {
      if (settled || err) return;
      settled = true;
      this.host.timers.clearTimeout(this.timer);
      if (this.state === "writing") this.replied();
    });
    // The usual case: the kernel took it at once.
    if (this.socket.writableLength === 0 || settled) {
      settled = true;
      return false;
    }
    this.state = "writing";
    this.arm(this.limits.writeMs, () => this.drop());
    return true;
  }

  private replied(): void {
    if (!this.frames.complete) {
      this.awaitMessage(this.limits.idleMs);
      return;
    }
    // The next message is here already (a pipelining client): it is taken on the next turn of the event
    // loop, so one connection's backlog does not hold up the others, UDP or the timers (answered in one
    // go, a 64 KiB chunk of queries kept them waiting, and its replies' write callbacks piled up meanwhile).
    this.state = "reading";
    setImmediate(() => {
      if (this.state === "reading") this.awaitMessage(this.limits.idleMs);
    });
  }

  private arm(ms: number, expire: () => void): void {
    this.host.timers.clearTimeout(this.timer);
    this.timer = this.host.timers.setTimeout(expire, ms);
  }
}
