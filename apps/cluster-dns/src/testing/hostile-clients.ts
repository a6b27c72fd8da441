// Hostile DNS-over-TCP clients for fault tests and bench/resolver-hostile-tcp.bench.ts: one that pipelines
// queries and never reads a reply, and many that send a query one byte at a time. Loopback only.
import { readFileSync } from "node:fs";
import * as net from "node:net";
import { query } from "./process.js";

/** A query framed for TCP (its 2-byte length first), built by hand as process.ts's query() is. */
export function tcpQuery(id: number, name: string): Buffer {
  const body = query(id, name);
  const prefix = Buffer.alloc(2);
  prefix.writeUInt16BE(body.length);
  return Buffer.concat([prefix, body]);
}

/** A process's resident memory in bytes (VmRSS). */
export function rssBytes(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8").match(/^VmRSS:\s+(\d+) kB/m);
  if (!line) throw new Error(`no VmRSS for pid ${pid}`);
  return Number(line[1]) * 1024;
}

/** Samples a process's RSS every `intervalMs`; `stop()` gives the highest seen. */
export function samplePeakRss(pid: number, intervalMs = 100): { stop(): number } {
  let peak = rssBytes(pid);
  const timer = setInterval(() => {
    try {
      peak = Math.max(peak, rssBytes(pid));
    } catch {
      // The process is gone; the peak so far stands.
    }
  }, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

export interface PipelineResult {
  /** Queries handed to the client's socket. */
  written: number;
  /** Whether the server closed (or reset) the connection before the client gave up. */
  closedByServer: boolean;
  /** Milliseconds from connecting until the server closed it or the client gave up. */
  ms: number;
}

/**
 * Pipelines up to `count` queries for `name` over one connection and never reads a reply, writing only as
 * fast as the connection takes them. Ends when all are written and `budgetMs` has passed, when the server
 * closes the connection, or at `budgetMs`; `stop` (a promise) ends it early. The connection is destroyed at
 * the end.
 */
export async function pipelineWithoutReading(
  port: number,
  host: string,
  count: number,
  budgetMs: number,
  name = "a.example.org",
): Promise<PipelineResult> {
  const batchSize = 1000;
  const batch = Buffer.concat(Array.from({ length: batchSize }, (_, i) => tcpQuery(i + 1, name)));
  const socket = net.connect(port, host);
  // No 'data' listener: Node reads at most its 64 KiB buffer, the kernel's receive buffer fills, and the
  // server's writes stall.
  socket.pause();
  const started = Date.now();
  let closedByServer = false;
  const closed = new Promise<void>((resolve) => {
    socket.on("error", () => undefined);
    socket.on("close", () => {
      closedByServer = true;
      resolve();
    });
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("connect", resolve);
    socket.once("error", reject);
  });
  const deadline = new Promise<void>((resolve) => setTimeout(resolve, budgetMs).unref());
  let written = 0;
  let over = false;
  void Promise.race([closed, deadline]).then(() => {
    over = true;
  });
  while (!over && written < count) {
    written += batchSize;
    if (!socket.write(batch))
      await Promise.race([new Promise((r) => socket.once("drain", r)), closed, deadline]);
  }
  await Promise.race([closed, deadline]);
  const ms = Date.now() - started;
  const result = { written, closedByServer, ms };
  socket.destroy();
  return result;
}

/**
 * `count` clients that each send one query a byte every `byteMs`, and connect again `reconnectMs` after
 * the server closes them, until stop(). They ramp up over about a second (100 connects every 100 ms).
 */
export function slowClients(
  port: number,
  host: string,
  count: number,
  { byteMs = 1000, reconnectMs = 1000 } = {},
): { stop(): void; open(): number; closedByServer(): number } {
  const sockets = new Set<net.Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  let closes = 0;
  const later = (fn: () => void, ms: number) => {
    const t = setTimeout(() => {
      timers.delete(t);
      fn();
    }, ms);
    timers.add(t);
  };
  const client = (index: number) => {
    if (stopped) return;
    const bytes = tcpQuery(index + 1, "slow.example.org");
    const socket = net.connect(port, host);
    sockets.add(socket);
    let next = 0;
    const drip = setInterval(() => {
      if (socket.writable) socket.write(bytes.subarray(next % bytes.length, (next % bytes.length) + 1));
      next++;
    }, byteMs);
    socket.on("error", () => undefined);
    socket.on("close", () => {
      clearInterval(drip);
      sockets.delete(socket);
      if (stopped) return;
      closes++;
      later(() => client(index), reconnectMs);
    });
  };
  for (let i = 0; i < count; i++) later(() => client(i), Math.floor(i / 100) * 100);
  return {
    stop() {
      stopped = true;
      for (const t of timers) clearTimeout(t);
      for (const s of sockets) s.destroy();
    },
    open: () => sockets.size,
    closedByServer: () => closes,
  };
}

/**
 * One query over a new connection, as a plain client asks it: milliseconds until the reply with its id
 * came, or undefined when the server closed the connection first or `timeoutMs` passed.
 */
export function tcpQueryOnce(
  port: number,
  host: string,
  id: number,
  name: string,
  timeoutMs: number,
): Promise<number | undefined> {
  return new Promise((resolve) => {
    const started = performance.now();
    const socket = net.connect(port, host);
    let got = Buffer.alloc(0);
    const done = (ms: number | undefined) => {
      clearTimeout(timer);
      socket.destroy();
      resolve(ms);
    };
    const timer = setTimeout(() => done(undefined), timeoutMs);
    socket.on("connect", () => socket.write(tcpQuery(id, name)));
    socket.on("data", (chunk: Buffer) => {
      got = Buffer.concat([got, chunk]);
      if (got.length >= 4 && got.length >= 2 + got.readUInt16BE(0) && got.readUInt16BE(2) === id)
        done(performance.now() - started);
    });
    socket.on("error", () => done(undefined));
    socket.on("close", () => done(undefined));
  });
}

/** Open files this process may have: its soft RLIMIT_NOFILE (Node raises it to the hard limit at start). */
export function openFileLimit(): number {
  const line = readFileSync("/proc/self/limits", "utf8").match(/^Max open files\s+(\d+|unlimited)/m);
  return line?.[1] === "unlimited" ? Number.POSITIVE_INFINITY : Number(line?.[1] ?? 0);
}
