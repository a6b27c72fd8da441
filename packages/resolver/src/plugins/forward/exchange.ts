import * as dgram from "node:dgram";
import * as net from "node:net";
import { FrameSplitter, frame } from "../../server/frames.js";
import type { Timers } from "../../server/timers.js";

/** Where an upstream lives. */
export interface HostPort {
  host: string;
  port: number;
}

/**
 * Sends one encoded query and resolves with the first reply carrying the same ID; replies with other IDs
 * are ignored (a late answer to an earlier query, or a spoofing attempt), as miekg/dns does. Each UDP
 * query gets its own socket, so its source port is random. Rejects on timeout or socket error.
 */
export function exchange(
  to: HostPort,
  query: Buffer,
  proto: "udp" | "tcp",
  timeoutMs: number,
  timers: Timers,
): Promise<Buffer> {
  const id = query.readUInt16BE(0);
  return new Promise((resolve, reject) => {
    let done = false;
    let finish: (err: Error | undefined, reply?: Buffer) => void;
    const timer = timers.setTimeout(
      () => finish(new Error(`read ${proto} ${label(to)}: i/o timeout`)),
      timeoutMs,
    );
    if (proto === "udp") {
      const socket = dgram.createSocket(net.isIPv6(to.host) ? "udp6" : "udp4");
      finish = (err, reply) => {
        if (done) return;
        done = true;
        timers.clearTimeout(timer);
        socket.close();
        if (err) reject(err);
        else resolve(reply as Buffer);
      };
      socket.on("error", (err) => finish(err));
      socket.on("message", (msg, rinfo) => {
        if (rinfo.port !== to.port || msg.length < 12 || msg.readUInt16BE(0) !== id) return;
        finish(undefined, msg);
      });
      socket.send(query, to.port, to.host);
      return;
    }
    const socket = net.connect(to.port, to.host);
    const splitter = new FrameSplitter();
    finish = (err, reply) => {
      if (done) return;
      done = true;
      timers.clearTimeout(timer);
      socket.destroy();
      if (err) reject(err);
      else resolve(reply as Buffer);
    };
    socket.on("error", (err) => finish(err));
    socket.on("connect", () => socket.write(frame(query)));
    socket.on("data", (chunk) => {
      for (const msg of splitter.push(chunk))
        if (msg.length >= 12 && msg.readUInt16BE(0) === id) finish(undefined, msg);
    });
    socket.on("close", () => finish(new Error(`read tcp ${label(to)}: connection closed`)));
  });
}

export function label(to: HostPort): string {
  return net.isIPv6(to.host) ? `[${to.host}]:${to.port}` : `${to.host}:${to.port}`;
}
