/** IPv4 arithmetic for the lab's address plan; the lab's networks are IPv4 only. */

export function toInt(ip: string): number {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`not an IPv4 address: ${ip}`);
  }
  return parts.reduce((acc, p) => acc * 256 + p, 0);
}

export function fromInt(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join(".");
}

export interface Cidr {
  base: number;
  bits: number;
}

export function parseCidr(cidr: string): Cidr {
  const [ip, len] = cidr.split("/");
  const bits = Number(len);
  if (!ip || !Number.isInteger(bits) || bits < 0 || bits > 32) throw new Error(`not an IPv4 CIDR: ${cidr}`);
  const size = 2 ** (32 - bits);
  return { base: toInt(ip) - (toInt(ip) % size), bits };
}

export const cidrSize = (c: Cidr) => 2 ** (32 - c.bits);

/** The n-th address of a CIDR (0 is the network address). */
export function nth(cidr: string, n: number): string {
  const c = parseCidr(cidr);
  if (n < 0 || n >= cidrSize(c)) throw new Error(`${cidr} has no address number ${n}`);
  return fromInt(c.base + n);
}

export function contains(cidr: string, ip: string): boolean {
  const c = parseCidr(cidr);
  const n = toInt(ip);
  return n >= c.base && n < c.base + cidrSize(c);
}
