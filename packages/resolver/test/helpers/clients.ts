import { execFile } from "node:child_process";
import * as dgram from "node:dgram";
import * as net from "node:net";
import { promisify } from "node:util";
import { FrameSplitter } from "../../src/server/frames.js";
import { decodeMessage } from "../../src/wire/decode.js";
import type { Message } from "../../src/wire/message.js";

const run = promisify(execFile);

/** Runs the real `dig` against a loopback server; returns its stdout. */
export async function dig(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run("dig", ["@127.0.0.1", "-p", String(port), "+time=2", "+tries=1", ...args]);
  return stdout;
}

export function decodeOrFail(buf: Buffer): Message {
  const d = decodeMessage(buf);
  if (d.kind !== "message")
    throw new Error(`reply does not decode: ${d.kind === "malformed" ? d.reason : d.kind}`);
  return d.message;
}

/** Sends one UDP packet and waits for one reply, or undefined after `timeoutMs`. */
export function udpExchange(
  port: number,
  packet: Buffer,
  timeoutMs = 500,
  host = "127.0.0.1",
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    const sock = dgram.createSocket("udp4");
    const timer = setTimeout(() => {
      sock.close();
      resolve(undefined);
    }, timeoutMs);
    sock.on("message", (msg) => {
      clearTimeout(timer);
      sock.close();
      resolve(msg);
    });
    // Nothing listening there may come back as an ICMP error; that is no reply too.
    sock.on("error", () => undefined);
    sock.send(packet, port, host);
  });
}

/** Opens a TCP connection and collects the framed replies it receives until it closes. */
export function tcpSession(port: number): Promise<{
  socket: net.Socket;
  replies: Buffer[];
  closed: Promise<void>;
  next(): Promise<Buffer>;
}> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, "127.0.0.1");
    const replies: Buffer[] = [];
    const waiters: ((b: Buffer) => void)[] = [];
    const splitter = new FrameSplitter();
    socket.on("data", (chunk) => {
      for (const f of splitter.push(chunk)) {
        const w = waiters.shift();
        if (w) w(f);
        else replies.push(f);
      }
    });
    const closed = new Promise<void>((done) => socket.on("close", () => done()));
    socket.on("error", () => undefined);
    socket.once("connect", () =>
      resolve({
        socket,
        replies,
        closed,
        next: () => {
          const ready = replies.shift();
          return ready ? Promise.resolve(ready) : new Promise((r) => waiters.push(r));
        },
      }),
    );
    socket.once("error", reject);
  });
}
