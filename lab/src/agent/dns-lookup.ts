import { createSocket } from "node:dgram";
import { readFileSync } from "node:fs";
import { isIPv6 } from "node:net";

/** The first `nameserver` of a resolv.conf text, as the C libraries pick it. */
export function firstNameserver(resolvConf: string): string | undefined {
  for (const line of resolvConf.split("\n")) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (m) return m[1];
  }
  return undefined;
}

export const podNameserver = (path = "/etc/resolv.conf"): string | undefined =>
  firstNameserver(readFileSync(path, "utf8"));

/** A one-question A query with RD set: header, the name's labels, type A, class IN. */
export function aQuery(name: string, id: number): Buffer {
  const labels = name.replace(/\.$/, "").split(".").filter(Boolean);
  const parts = [Buffer.from([id >> 8, id & 0xff, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0])];
  for (const l of labels) parts.push(Buffer.from([l.length]), Buffer.from(l, "ascii"));
  parts.push(Buffer.from([0, 0, 1, 0, 1]));
  return Buffer.concat(parts);
}

// The c-ares codes Node's resolver reports for the same outcomes, so a report reads alike in either mode.
const rcodeErrors: Record<number, string> = {
  1: "EFORMERR",
  2: "ESERVFAIL",
  3: "ENOTFOUND",
  4: "ENOTIMP",
  5: "EREFUSED",
};

/** Undefined when `reply` answers query `id` with at least one record (or truncated); else the error code. */
export function replyError(reply: Buffer, id: number): string | undefined | "not ours" {
  if (reply.length < 12 || reply.readUInt16BE(0) !== id || !((reply[2] ?? 0) & 0x80)) return "not ours";
  const rcode = (reply[3] ?? 0) & 0x0f;
  if (rcode !== 0) return rcodeErrors[rcode] ?? `ERCODE${rcode}`;
  // Truncated: the server answered; a C library would repeat it over TCP.
  if ((reply[2] ?? 0) & 0x02) return undefined;
  return reply.readUInt16BE(6) > 0 ? undefined : "ENODATA";
}

/**
 * After a timeout, how long to keep listening for the answer, and whom to tell when it comes: a lookup counted as
 * lost whose answer came late was held up on the way or in this process, not lost on the way.
 */
export interface LateReplyWatch {
  windowMs: number;
  onLate(msAfterSending: number): void;
}

/** What a failed lookup rejects with: its code, and where a timeout came from. */
export interface LookupError extends Error {
  code: string;
  sourcePort?: number;
  /** A timeout's timer fired this many ms after the query was sent: far past the timeout, this process was stalled. */
  timerMs?: number;
}

/**
 * Resolves `name` (fully qualified) to A records through `server` on a UDP socket of its own, closed afterwards,
 * as glibc, musl and Go do per lookup: each lookup has a new source port, so it mostly follows the node's rules of
 * the moment instead of a conntrack entry an earlier lookup left (c-ares, Node's resolver, keeps one socket open).
 * The socket is connected, so an ICMP port-unreachable arrives as ECONNREFUSED. Rejects with the error's code and
 * the source port. A new socket is not a new flow for sure: the kernel may hand out a port whose conntrack entry
 * from an earlier lookup (30 s for UDP) still stands, and then the lookup goes where that entry says. With `late`,
 * a timed-out lookup's socket stays open for `late.windowMs` more, and an answer that arrives then is reported.
 */
export function lookupOnce(
  server: string,
  name: string,
  timeoutMs: number,
  port = 53,
  late?: LateReplyWatch,
): Promise<void> {
  const id = Math.floor(Math.random() * 0x10000);
  const socket = createSocket(isIPv6(server) ? "udp6" : "udp4");
  return new Promise<void>((resolve, reject) => {
    let sentAt = performance.now();
    // Armed when the query leaves, not before the connect: the timeout and the reported timerMs count from the send.
    let timer: NodeJS.Timeout | undefined;
    let finished = false;
    let sourcePort: number | undefined;
    function done(error?: string) {
      if (finished) return;
      finished = true;
      clearTimeout(timer);
      const timedOut = error === "ETIMEOUT";
      if (timedOut && late) setTimeout(() => socket.close(), late.windowMs);
      else socket.close();
      if (error) {
        const timerMs = timedOut ? Math.round(performance.now() - sentAt) : undefined;
        reject(Object.assign(new Error(error), { code: error, sourcePort, ...(timerMs ? { timerMs } : {}) }));
      } else resolve();
    }
    socket.on("error", (err: NodeJS.ErrnoException) => done(err.code ?? err.message));
    socket.on("message", (reply) => {
      const error = replyError(reply, id);
      if (error === "not ours") return;
      if (finished) late?.onLate(Math.round(performance.now() - sentAt));
      done(error);
    });
    socket.connect(port, server, () => {
      sourcePort = socket.address().port;
      sentAt = performance.now();
      timer = setTimeout(() => done("ETIMEOUT"), timeoutMs);
      socket.send(aQuery(name, id));
    });
  });
}
