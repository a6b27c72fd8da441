import type { Peer } from "../../plugin/handler.js";
import { ipv6Bytes } from "../../wire/encode.js";
import type { Message } from "../../wire/message.js";
import type { RequestState } from "./rule.js";

/** The `{...}` values a `local` rule can put in its option, as this server knows them. */
export const LOCAL_VARIABLES = new Set([
  "{qname}",
  "{qtype}",
  "{client_ip}",
  "{client_port}",
  "{protocol}",
  "{server_port}",
]);

/**
 * Upstream also takes `{server_ip}`; a request here does not carry the address it arrived on, so that one is
 * refused at setup rather than quietly never matching.
 */
export const UNKNOWN_VARIABLES = new Set(["{server_ip}"]);

/** A metadata label, `namespace/name`: upstream accepts it (there is no metadata plugin here to fill it). */
export function isMetadataVariable(variable: string): boolean {
  const label = variable.slice(1, -1);
  const slash = label.indexOf("/");
  return slash > 0 && slash < label.length - 1;
}

const uint16 = (n: number) => {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(n);
  return b;
};

/** The address of an IPv4 client (an IPv4-mapped one too) as 4 bytes, any other as 16 (Go's To4 / To16). */
export function clientAddress(peer: Peer): { family: 1 | 2; bytes: Buffer } {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(peer.address)?.[1];
  if (mapped !== undefined || peer.family === "IPv4") {
    return { family: 1, bytes: Buffer.from((mapped ?? peer.address).split(".").map(Number)) };
  }
  return { family: 2, bytes: ipv6Bytes(peer.address) };
}

/** `dns://:53` and `dns://127.0.0.1:53` both end in the port. */
function serverPort(server: string): number | undefined {
  const port = /:(\d+)$/.exec(server)?.[1];
  return port === undefined ? undefined : Number(port);
}

/** The bytes a variable stands for in this request, or undefined (upstream then leaves the request alone). */
export function variableData(variable: string, request: Message, state: RequestState): Buffer | undefined {
  const q = request.question[0];
  switch (variable) {
    case "{qname}":
      return Buffer.from(q?.name ?? ".");
    case "{qtype}":
      return uint16(q?.type ?? 0);
    case "{client_ip}":
      return clientAddress(state.remote).bytes;
    case "{client_port}":
      return uint16(state.remote.port);
    case "{protocol}":
      return Buffer.from(state.transport);
    case "{server_port}": {
      const port = serverPort(state.server);
      return port === undefined ? undefined : uint16(port);
    }
    default:
      // Metadata labels: no plugin here provides metadata, so there is never a value.
      return undefined;
  }
}

/** An ECS option's data (RFC 7871): family, source prefix, scope 0, then the prefix's bytes of the address. */
export function subnetData(peer: Peer, v4Bits: number, v6Bits: number): Buffer {
  const { family, bytes } = clientAddress(peer);
  const bits = family === 1 ? v4Bits : v6Bits;
  const kept = Buffer.from(bytes.subarray(0, Math.ceil(bits / 8)));
  if (bits % 8 !== 0 && kept.length > 0) {
    const last = kept.length - 1;
    kept[last] = (kept[last] as number) & (0xff << (8 - (bits % 8)));
  }
  const head = Buffer.from([0, family, bits, 0]);
  return Buffer.concat([head, kept]);
}
