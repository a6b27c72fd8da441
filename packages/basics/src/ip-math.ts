/**
 * Address arithmetic for plans (the lab's nodes, pods and service ranges), both families: an address is a bigint
 * of 32 or 128 bits, read with parseIP and printed with formatIP (ip.ts), so the n-th address of a range is a sum.
 */
import { type CIDR, parseCIDR } from "./cidr.js";
import { formatIP, type IPFamily, parseIP } from "./ip.js";

const width = (f: IPFamily) => (f === "IPv4" ? 32 : 128);

function bigOf(bytes: Uint8Array): bigint {
  let n = 0n;
  for (const b of bytes) n = (n << 8n) | BigInt(b);
  return n;
}

/** An address as a number; throws one line when `ip` is not an address. */
export function toBig(ip: string): bigint {
  const parsed = parseIP(ip);
  if (!parsed) throw new Error(`not an IP address: ${ip}`);
  return bigOf(parsed.bytes);
}

/** The address `n` of `family`, as formatIP prints it. */
export function fromBig(family: IPFamily, n: bigint): string {
  const bytes = new Uint8Array(width(family) / 8);
  for (let i = bytes.length - 1, rest = n; i >= 0; i--, rest >>= 8n) bytes[i] = Number(rest & 255n);
  return formatIP({ family, bytes });
}

/** A CIDR as a range of numbers. */
export interface CidrRange {
  family: IPFamily;
  /** The network address. */
  base: bigint;
  bits: number;
}

/** A CIDR (parseCIDR's reading) as a range; throws one line when `cidr` is not one. */
export function cidrRange(cidr: string): CidrRange {
  const c: CIDR | null = parseCIDR(cidr);
  if (!c) throw new Error(`not a CIDR: ${cidr}`);
  return { family: c.ip.family, base: bigOf(c.ip.bytes), bits: c.prefix };
}

/** How many addresses the range holds. */
export const cidrSize = (c: CidrRange): bigint => 1n << BigInt(width(c.family) - c.bits);

/** The n-th address of a CIDR (0 is the network address). */
export function nth(cidr: string, n: number): string {
  const c = cidrRange(cidr);
  if (n < 0 || BigInt(n) >= cidrSize(c)) throw new Error(`${cidr} has no address number ${n}`);
  return fromBig(c.family, c.base + BigInt(n));
}
