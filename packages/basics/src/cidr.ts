/**
 * CIDRs as bytes, in the two readings of ip.ts: parseCIDR is kube-proxy's (k8s.io/utils/net ParseCIDRSloppy,
 * one family per CIDR), parseGoCIDR is CoreDNS's (Go's net.ParseCIDR, 16 bytes for both families). They differ on
 * purpose: `::ffff:10.0.0.0/104` is IPv4 with an IPv6 prefix to Go's net.IPNet, and kube-proxy refuses it.
 */
import { formatIP, type IP, isIPv4Mapped, parseGoIP, parseIP } from "./ip.js";

export interface CIDR {
  /** The network address: the address with the bits past the prefix cleared. */
  readonly ip: IP;
  readonly prefix: number;
}

/** Clears the bits of `bytes` past the first `bits`, into a copy. */
function masked(bytes: Uint8Array, bits: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  for (let i = 0; i < out.length; i++) {
    const keep = Math.max(0, Math.min(8, bits - 8 * i));
    out[i] = (bytes[i] ?? 0) & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}

/**
 * k8s.io/utils/net's ParseCIDRSloppy as kube-proxy reads Service fields: an address parseIP takes, `/`, and a
 * prefix of one to three digits no longer than the address; the address is masked. An IPv4 address must be
 * written as one (`::ffff:a.b.c.d/n` is refused). White space around the text is ignored. Null otherwise.
 */
export function parseCIDR(text: string): CIDR | null {
  const [addr, prefixText, extra] = text.trim().split("/");
  if (addr === undefined || prefixText === undefined || extra !== undefined) return null;
  if (!/^[0-9]{1,3}$/.test(prefixText)) return null;
  const ip = parseIP(addr);
  if (!ip || addr.includes(":") !== (ip.family === "IPv6")) return null;
  const prefix = Number(prefixText);
  if (prefix > ip.bytes.length * 8) return null;
  return { ip: { family: ip.family, bytes: masked(ip.bytes, prefix) }, prefix };
}

/** Go's IPNet.String(): the masked address and the prefix length. */
export function formatCIDR(cidr: CIDR): string {
  return `${formatIP(cidr.ip)}/${cidr.prefix}`;
}

/** Whether `ip` lies in `cidr`; an address of the other family never does. */
export function cidrContains(cidr: CIDR, ip: IP): boolean {
  if (cidr.ip.family !== ip.family) return false;
  for (let bit = 0; bit < cidr.prefix; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((cidr.ip.bytes[byte] ?? 0) & mask) !== ((ip.bytes[byte] ?? 0) & mask)) return false;
  }
  return true;
}

/** cidrContains for texts: false when either does not parse. */
export function cidrContainsText(cidr: string, ip: string): boolean {
  const c = parseCIDR(cidr);
  const i = parseIP(ip);
  return c !== null && i !== null && cidrContains(c, i);
}

/** An address block as Go's net.ParseCIDR gives it to CoreDNS: 16 bytes (IPv4 in its mapped form) and the bits that count. */
export interface GoCIDR {
  readonly base: Uint8Array;
  /** Of the 16 bytes: an IPv4 prefix length plus 96, so one comparison serves both families, as Go's own mapped storage does. */
  readonly bits: number;
}

/**
 * Go's net.ParseCIDR: an address parseGoIP takes, `/`, and a decimal prefix length no longer than the address.
 * Undefined when Go would return an error.
 */
export function parseGoCIDR(text: string): GoCIDR | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const address = text.slice(0, slash);
  const ip = parseGoIP(address);
  const length = text.slice(slash + 1);
  if (!ip || !/^\d{1,9}$/.test(length)) return undefined;
  // `::ffff:1.2.3.4` is IPv6 to Go's parser (a 128-bit prefix), only a dotted quad is 32-bit.
  const v4 = isIPv4Mapped(ip) && !address.includes(":");
  const n = Number(length);
  if (n > (v4 ? 32 : 128)) return undefined;
  const bits = v4 ? n + 96 : n;
  return { base: masked(ip, bits), bits };
}

/** Whether the address (16 bytes, as parseGoIP gives them) lies in the block. */
export function goCIDRContains(cidr: GoCIDR, ip: Uint8Array): boolean {
  const m = masked(ip, cidr.bits);
  for (let i = 0; i < 16; i++) if (m[i] !== cidr.base[i]) return false;
  return true;
}

/** "a,b" as the control plane's flags take a dual-stack range: the CIDRs, trimmed, in order. */
export function cidrList(list: string): string[] {
  return list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}
