import { className, rcodeName, typeName } from "../../wire/constants.js";
import type { Transport } from "../../wire/edns.js";
import { MAX_TCP_SIZE, MIN_UDP_SIZE } from "../../wire/edns.js";
import type { Message } from "../../wire/message.js";

/** CoreDNS's common log format; `{combined}` adds the opcode. */
export const COMMON_FORMAT =
  '{remote}:{port} - {>id} "{type} {class} {name} {proto} {size} {>do} {>bufsize}" {rcode} {>rflags} {rsize} {duration}';
export const COMBINED_FORMAT = `${COMMON_FORMAT} "{>opcode}"`;

/** Everything one log line can mention about a query and its reply. */
export interface LogEntry {
  request: Message;
  /** The reply as written, or a bare one carrying the rcode the chain returned. */
  reply: Message;
  /** Encoded sizes in bytes. */
  requestSize: number;
  replySize: number;
  remote: { address: string; port: number };
  transport: Transport;
  /** Seconds spent below the log plugin. */
  duration: number;
}

/** Expands `{common}` and `{combined}` in a user's format. */
export function expandFormat(format: string): string {
  return format.replaceAll("{common}", COMMON_FORMAT).replaceAll("{combined}", COMBINED_FORMAT);
}

/**
 * Fills a format's `{placeholders}`. Unknown ones, metadata (`{/name}`) and values we do not have
 * become `-`. Header placeholders (`{>id}`) are case-insensitive, as in CoreDNS.
 */
export function formatEntry(format: string, e: LogEntry): string {
  return format.replace(/\{[^{}]*\}/g, (token) =>
    value(token.startsWith("{>") ? token.toLowerCase() : token, e),
  );
}

function value(token: string, e: LogEntry): string {
  const q = e.request.question[0];
  switch (token) {
    case "{type}":
      return q ? typeName(q.type) : "-";
    case "{name}":
      return q?.name ?? "-";
    case "{class}":
      return q ? className(q.class) : "-";
    case "{proto}":
      return e.transport;
    case "{size}":
      return String(e.requestSize);
    case "{remote}":
      return e.remote.address.includes(":") ? `[${e.remote.address}]` : e.remote.address;
    case "{port}":
      return String(e.remote.port);
    case "{rcode}":
      return rcodeName(e.reply.rcode);
    case "{rsize}":
      return String(e.replySize);
    case "{duration}":
      return `${e.duration}s`;
    case "{>id}":
      return String(e.request.id);
    case "{>opcode}":
      return String(e.request.opcode);
    case "{>do}":
      return String(e.request.edns?.dnssecOk ?? false);
    case "{>bufsize}":
      return String(bufferSize(e.request, e.transport));
    case "{>rflags}":
      return flags(e.reply);
    default:
      return "-";
  }
}

/** The largest reply the client accepts, as CoreDNS's request.Size() reports it. */
function bufferSize(request: Message, transport: Transport): number {
  if (transport === "tcp") return MAX_TCP_SIZE;
  return Math.max(request.edns?.udpSize ?? MIN_UDP_SIZE, MIN_UDP_SIZE);
}

function flags(m: Message): string {
  const set: [boolean, string][] = [
    [m.qr, "qr"],
    [m.aa, "aa"],
    [m.tc, "tc"],
    [m.rd, "rd"],
    [m.ra, "ra"],
    [m.z, "z"],
    [m.ad, "ad"],
    [m.cd, "cd"],
  ];
  return set
    .filter(([on]) => on)
    .map(([, name]) => name)
    .join(",");
}
