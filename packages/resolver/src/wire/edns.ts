import { Rcode } from "./constants.js";
import type { Edns, Message } from "./message.js";
import { replyTo } from "./message.js";

/** Without EDNS a UDP reply must fit 512 bytes (RFC 1035 4.2.1); EDNS sizes below that count as 512. */
export const MIN_UDP_SIZE = 512;
export const MAX_TCP_SIZE = 65535;

export type Transport = "udp" | "tcp";

/** How large a reply to `request` may be on `transport`. */
export function replySizeLimit(request: Message, transport: Transport): number {
  if (transport === "tcp") return MAX_TCP_SIZE;
  return Math.max(request.edns?.udpSize ?? MIN_UDP_SIZE, MIN_UDP_SIZE);
}

/** EDNS options echoed back to the client (NSID, EXPIRE, COOKIE, TCP-KEEPALIVE, PADDING), as CoreDNS does. */
const ECHOED_OPTIONS = new Set([3, 9, 10, 11, 12]);

/** Codes a plugin's setup added to those echoed (CoreDNS's edns.SetSupportedOption; process-wide there too). */
const registeredOptions = new Set<number>();

/** Echoes option `code` back to clients from now on, in every server (rewrite's `edns0 local` codes). */
export function supportOption(code: number): void {
  registeredOptions.add(code);
}

const echoed = (code: number) => ECHOED_OPTIONS.has(code) || registeredOptions.has(code);

/**
 * The OPT record a reply carries: none unless the client sent one; then version 0, the client's buffer
 * size and DO bit, and only the options we understand. A plugin's own OPT keeps its options, and one marked
 * `keep` is sent unchanged to a client without EDNS.
 */
export function replyEdns(request: Message, reply: Message): Edns | undefined {
  const asked = request.edns;
  const own = reply.edns;
  if (!asked)
    return own?.keep
      ? { udpSize: own.udpSize, version: own.version, dnssecOk: own.dnssecOk, options: own.options }
      : undefined;
  return {
    udpSize: asked.udpSize,
    version: 0,
    dnssecOk: asked.dnssecOk || (own?.dnssecOk ?? false),
    options: own ? own.options : asked.options.filter((o) => echoed(o.code)),
  };
}

/**
 * CoreDNS refuses EDNS versions above 0 before any plugin runs: BADVERS with an OPT of version 0 and a
 * zero buffer size. Undefined when the request is fine.
 */
export function badVersionReply(request: Message): Message | undefined {
  if (!request.edns || request.edns.version === 0) return undefined;
  const reply = replyTo(request, Rcode.BADVERS);
  reply.edns = { udpSize: 0, version: 0, dnssecOk: false, options: [] };
  return reply;
}
