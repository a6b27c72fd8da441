import * as dgram from "node:dgram";
import * as net from "node:net";
import type { Timers } from "../../server/timers.js";
import type { HostPort } from "./exchange.js";
import { label } from "./exchange.js";

/** Idle sockets kept per upstream at most; a burst beyond that closes its sockets after use. */
const MAX_IDLE = 256;

interface Pooled {
  socket: dgram.Socket;
  /** When it was last put back, in `now()` milliseconds. */
  idleSince: number;
  /** Whether it has been put back once, so taking it again reuses it. */
  reused: boolean;
  /** The exchange waiting on this socket, if any; a socket serves one query at a time. */
  waiting?: { id: number; done: (err: Error | undefined, reply?: Buffer) => void };
  /** Set once connected to the upstream; until then the query waits here. */
  connected: boolean;
  queued?: Buffer;
}

/**
 * UDP sockets to one upstream, reused the way CoreDNS reuses its connections: a query takes an idle
 * socket (or opens one, on a kernel-chosen random port), and gives it back when its reply came. A socket
 * carries one query at a time, so each query still has its own source port and random ID; a reply under
 * another ID is ignored. Each socket is connected to the upstream, as Go's net.Dial connects CoreDNS's:
 * the kernel drops datagrams from anyone else, sends need no address, and an ICMP port unreachable
 * fails the exchange at once ("connection refused") instead of after the read timeout. Sockets idle
 * longer than `expireMs` (forward's `expire`) are closed, and so is a socket whose exchange failed, since
 * a late reply could still arrive on it.
 */
export class UdpPool {
  private readonly idle: Pooled[] = [];
  private closed = false;

  constructor(
    private readonly to: HostPort,
    private readonly expireMs: number,
    private readonly timers: Timers,
    private readonly now: () => number,
  ) {}

  /**
   * Sends `query` and resolves with the first reply under its ID; rejects on timeout or socket error. `taken` is
   * told whether an idle socket was reused (CoreDNS's connection cache hit) or a new one opened (a miss).
   */
  exchange(query: Buffer, timeoutMs: number, taken?: (reused: boolean) => void): Promise<Buffer> {
    const pooled = this.take();
    taken?.(pooled.reused);
    const id = query.readUInt16BE(0);
    return new Promise((resolve, reject) => {
      const timer = this.timers.setTimeout(
        () => finish(new Error(`read udp ${label(this.to)}: i/o timeout`)),
        timeoutMs,
      );
      const finish = (err: Error | undefined, reply?: Buffer) => {
        if (pooled.waiting?.done !== finish) return;
        pooled.waiting = undefined;
        this.timers.clearTimeout(timer);
        if (err) {
          pooled.socket.close();
          reject(err);
          return;
        }
        this.giveBack(pooled);
        resolve(reply as Buffer);
      };
      pooled.waiting = { id, done: finish };
      if (pooled.connected) pooled.socket.send(query);
      else pooled.queued = query;
    });
  }

  /** Closes the idle sockets; sockets still in an exchange close when it ends. */
  close(): void {
    this.closed = true;
    for (const p of this.idle.splice(0)) p.socket.close();
  }

  private take(): Pooled {
    const now = this.now();
    // Oldest first, as CoreDNS takes its cached connections: queries spread over the pool's source ports.
    for (;;) {
      const p = this.idle.shift();
      if (!p) break;
      if (now - p.idleSince <= this.expireMs) return p;
      p.socket.close();
    }
    return this.open();
  }

  private giveBack(p: Pooled): void {
    if (this.closed || this.idle.length >= MAX_IDLE) {
      p.socket.close();
      return;
    }
    p.idleSince = this.now();
    p.reused = true;
    this.idle.push(p);
  }

  private open(): Pooled {
    const socket = dgram.createSocket(net.isIPv6(this.to.host) ? "udp6" : "udp4");
    // Idle sockets must not keep the process alive; a pending exchange has its timer for that.
    socket.unref();
    const pooled: Pooled = { socket, idleSince: 0, reused: false, connected: false };
    socket.on("error", (err) => pooled.waiting?.done(err));
    socket.on("message", (msg) => {
      const w = pooled.waiting;
      if (!w || msg.length < 12 || msg.readUInt16BE(0) !== w.id) return;
      w.done(undefined, msg);
    });
    socket.connect(this.to.port, this.to.host, (err?: Error) => {
      if (err) {
        pooled.waiting?.done(err);
        return;
      }
      pooled.connected = true;
      const query = pooled.queued;
      pooled.queued = undefined;
      if (query && pooled.waiting) socket.send(query);
    });
    return pooled;
  }
}
