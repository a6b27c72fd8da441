// The byte forms of the values the renderer writes (addresses, protocols, ports, marks), as nft
// puts them in registers, set keys and map data. The hot ones (addresses and ports of map elements)
// are written in place into the batch. Anything else is refused with UnsupportedSyntax, which sends
// the transaction to `nft` instead.
import { writeIPv4, writeIPv6 } from "@switchyard/basics";

/** Text the netlink writer does not translate; the caller hands the transaction to `nft`. */
export class UnsupportedSyntax extends Error {}

export type AddressFamily = "ip" | "ip6";

export const addressLength = (family: AddressFamily) => (family === "ip" ? 4 : 16);

/** Writes an address of the table's family at `at`; IPv4-mapped IPv6 stays 16 bytes. */
export function writeAddress(buf: Uint8Array, at: number, text: string, family: AddressFamily): void {
  // nft (inet_pton) refuses a leading zero in a dotted quad.
  if (family === "ip") {
    if (!writeIPv4(buf, at, text, "strict")) throw new UnsupportedSyntax(`not an ip address: ${text}`);
    return;
  }
  if (!text.includes(":") || !writeIPv6(buf, at, text.trim(), "sloppy"))
    throw new UnsupportedSyntax(`not an ip6 address: ${text}`);
}

export function addressBytes(text: string, family: AddressFamily): Uint8Array {
  const out = new Uint8Array(addressLength(family));
  writeAddress(out, 0, text, family);
  return out;
}

export interface Prefix {
  /** Masked to the prefix. */
  readonly bytes: Uint8Array;
  /** Bits; the full length for a plain address. */
  readonly length: number;
  /** Written with a "/len" (nft then makes a set of them an interval set, even for a full length). */
  readonly explicit: boolean;
}

/** "addr" or "addr/len" of the table's family. */
export function prefixOf(text: string, family: AddressFamily): Prefix {
  const slash = text.indexOf("/");
  const full = addressLength(family) * 8;
  if (slash < 0) return { bytes: addressBytes(text, family), length: full, explicit: false };
  const lenText = text.slice(slash + 1);
  const length = Number(lenText);
  if (!/^\d{1,3}$/.test(lenText) || length > full) throw new UnsupportedSyntax(`bad prefix: ${text}`);
  const bytes = addressBytes(text.slice(0, slash), family);
  const mask = prefixMask(bytes.length, length);
  for (let i = 0; i < bytes.length; i++) bytes[i] = (bytes[i] ?? 0) & (mask[i] ?? 0);
  return { bytes, length, explicit: true };
}

/** `length` leading one bits in `bytes` bytes. */
export function prefixMask(bytes: number, length: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i++) {
    const bits = Math.max(0, Math.min(8, length - 8 * i));
    out[i] = (0xff << (8 - bits)) & 0xff;
  }
  return out;
}

export function protocolNumber(text: string): number {
  switch (text) {
    case "tcp":
      return 6;
    case "udp":
      return 17;
    case "sctp":
      return 132;
    default:
      throw new UnsupportedSyntax(`protocol ${text}`);
  }
}

/** A decimal port, 0-65535. */
export function portNumber(text: string): number {
  let n = 0;
  if (text.length === 0 || text.length > 5) throw new UnsupportedSyntax(`port ${text}`);
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 48 || c > 57) throw new UnsupportedSyntax(`port ${text}`);
    n = n * 10 + (c - 48);
  }
  if (n > 65535) throw new UnsupportedSyntax(`port ${text}`);
  return n;
}

/** Writes a port big-endian at `at`. */
export function writePort(buf: Uint8Array, at: number, port: number): void {
  buf[at] = port >> 8;
  buf[at + 1] = port & 0xff;
}

export function portBytes(port: number): Uint8Array {
  return Uint8Array.of(port >> 8, port & 0xff);
}

/** A u32 in host byte order (marks, ct bits, fib results, numgen keys are host-endian). */
export function hostU32(value: number): Uint8Array {
  const out = new Uint8Array(4);
  new DataView(out.buffer).setUint32(0, value >>> 0, true);
  return out;
}

/** "0x00004000" or a decimal. */
export function parseNumber(text: string): number {
  const n = /^0x[0-9a-fA-F]{1,8}$/.test(text) ? Number.parseInt(text.slice(2), 16) : Number(text);
  if (!/^(0x[0-9a-fA-F]{1,8}|\d+)$/.test(text) || n > 0xffffffff)
    throw new UnsupportedSyntax(`number ${text}`);
  return n;
}

/** An interface name as `meta iifname` compares it: padded to IFNAMSIZ, or a bare prefix for "name*". */
export function interfaceNameBytes(text: string): Uint8Array {
  const name = text.startsWith('"') && text.endsWith('"') ? text.slice(1, -1) : text;
  const wildcard = name.endsWith("*");
  const bare = wildcard ? name.slice(0, -1) : name;
  if (bare === "" || bare.length > 15 || /[\s"\\*]/.test(bare))
    throw new UnsupportedSyntax(`iifname ${text}`);
  const bytes = Buffer.from(bare, "latin1");
  if (wildcard) return bytes;
  const out = new Uint8Array(16);
  out.set(bytes);
  return out;
}

/** Bytes a field takes in a concatenation: its own, padded to 4. */
export const concatWidth = (bytes: number) => (bytes + 3) & ~3;
