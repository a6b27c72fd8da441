import { isIPv4, parseGoIP } from "../plugins/hosts/go-ip.js";

/** An address block, kept as 16 bytes (IPv4 in its mapped form) and the number of leading bits that count. */
export interface Cidr {
  readonly base: Buffer;
  readonly bits: number;
}

/**
 * Go's net.ParseCIDR: an address Go's parser takes, `/`, and a decimal prefix length no longer than the
 * address. IPv4 lengths are shifted by 96 so one 16-byte comparison serves both families, as Go's own
 * mapped storage does. Undefined when Go would return an error.
 */
export function parseCidr(text: string): Cidr | undefined {
  const slash = text.indexOf("/");
  if (slash < 0) return undefined;
  const address = text.slice(0, slash);
  const ip = parseGoIP(address);
  const length = text.slice(slash + 1);
  if (!ip || !/^\d{1,9}$/.test(length)) return undefined;
  // `::ffff:1.2.3.4` is IPv6 to Go's parser (a 128-bit prefix), only a dotted quad is 32-bit.
  const v4 = isIPv4(ip) && !address.includes(":");
  const n = Number(length);
  if (n > (v4 ? 32 : 128)) return undefined;
  const bits = v4 ? n + 96 : n;
  return { base: masked(ip, bits), bits };
}

/** Whether the address (16 bytes, as parseGoIP gives) lies in the block. */
export function cidrContains(cidr: Cidr, ip: Buffer): boolean {
  return masked(ip, cidr.bits).equals(cidr.base);
}

function masked(ip: Buffer, bits: number): Buffer {
  const out = Buffer.from(ip);
  for (let i = 0; i < 16; i++) {
    const keep = Math.max(0, Math.min(8, bits - i * 8));
    out[i] = (out[i] as number) & ((0xff << (8 - keep)) & 0xff);
  }
  return out;
}
