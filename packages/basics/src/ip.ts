/**
 * Address arithmetic for the lab's plan, both families: an address is a bigint (32 or 128 bits), printed as Go
 * prints it (IPv6 in RFC 5952's short form), because the apiserver and the proxies echo addresses in that form.
 */

export type Family = "IPv4" | "IPv6";

const width = (f: Family) => (f === "IPv4" ? 32 : 128);

function parseV4(ip: string): bigint | undefined {
  const parts = ip.split(".");
  if (parts.length !== 4 || parts.some((p) => !/^\d{1,3}$/.test(p) || Number(p) > 255)) return undefined;
  return parts.reduce((acc, p) => acc * 256n + BigInt(p), 0n);
}

function parseV6(ip: string): bigint | undefined {
  const halves = ip.split("::");
  if (halves.length > 2) return undefined;
  const groups = (s: string) => (s === "" ? [] : s.split(":"));
  const head = groups(halves[0] ?? "");
  const tail = groups(halves[1] ?? "");
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return undefined;
  const all = [...head, ...Array<string>(halves.length === 2 ? missing : 0).fill("0"), ...tail];
  if (all.some((g) => !/^[0-9a-fA-F]{1,4}$/.test(g))) return undefined;
  return all.reduce((acc, g) => acc * 65536n + BigInt(Number.parseInt(g, 16)), 0n);
}

export function familyOf(ip: string): Family {
  return ip.includes(":") ? "IPv6" : "IPv4";
}

/** An address as a number; throws one line when `ip` is not an address. */
export function toBig(ip: string): bigint {
  const n = familyOf(ip) === "IPv4" ? parseV4(ip) : parseV6(ip);
  if (n === undefined) throw new Error(`not an IP address: ${ip}`);
  return n;
}

export function fromBig(family: Family, n: bigint): string {
  if (family === "IPv4") return [24n, 16n, 8n, 0n].map((s) => String((n >> s) & 255n)).join(".");
  const groups = Array.from({ length: 8 }, (_, i) => Number((n >> BigInt(112 - 16 * i)) & 0xffffn));
  // The longest run of two or more zero groups (the first of equals) becomes "::".
  let best = { at: -1, len: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > best.len) best = { at: i, len: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (best.at < 0) return hex.join(":");
  return `${hex.slice(0, best.at).join(":")}::${hex.slice(best.at + best.len).join(":")}`;
}

export interface Cidr {
  family: Family;
  /** The network address. */
  base: bigint;
  bits: number;
}

export function parseCidr(cidr: string): Cidr {
  const [ip, len, extra] = cidr.split("/");
  const bits = Number(len);
  const family = familyOf(ip ?? "");
  if (!ip || extra !== undefined || !/^\d+$/.test(len ?? "") || bits > width(family))
    throw new Error(`not a CIDR: ${cidr}`);
  const size = 1n << BigInt(width(family) - bits);
  const n = toBig(ip);
  return { family, base: n - (n % size), bits };
}

export const cidrSize = (c: Cidr): bigint => 1n << BigInt(width(c.family) - c.bits);

/** The n-th address of a CIDR (0 is the network address). */
export function nth(cidr: string, n: number): string {
  const c = parseCidr(cidr);
  if (n < 0 || BigInt(n) >= cidrSize(c)) throw new Error(`${cidr} has no address number ${n}`);
  return fromBig(c.family, c.base + BigInt(n));
}

export function contains(cidr: string, ip: string): boolean {
  const c = parseCidr(cidr);
  if (familyOf(ip) !== c.family) return false;
  const n = toBig(ip);
  return n >= c.base && n < c.base + cidrSize(c);
}

/** "a,b" as the control plane's flags take a dual-stack range: the CIDRs, trimmed, in order. */
export function cidrList(list: string): string[] {
  return list
    .split(",")
    .map((s) => s.trim())
    .filter(Boolean);
}

/** `host:port` for a URL or a dial string: an IPv6 address in brackets. */
export function hostPort(ip: string, port: number | string): string {
  return familyOf(ip) === "IPv6" ? `[${ip}]:${port}` : `${ip}:${port}`;
}
