/**
 * IP addresses as bytes, read the way the Go program each caller stands in for reads them, and printed as Go
 * prints them (IPv6 in RFC 5952's short form), because the apiserver, the proxies and CoreDNS echo addresses in
 * that form. Two parsers, on purpose: parseIP is kube-proxy's and the EndpointSlice controller's
 * (k8s.io/utils/net ParseIPSloppy), parseGoIP is CoreDNS's (Go's net.ParseIP). They differ in leading zeros and
 * in how they hold an IPv4 address; the grammar itself is ip-text.ts.
 */
import { writeIPv4, writeIPv6 } from "./ip-text.js";

export type IPFamily = "IPv4" | "IPv6";

export interface IP {
  readonly family: IPFamily;
  /** 4 bytes for IPv4, 16 for IPv6, network order. */
  readonly bytes: Uint8Array;
}

/** Go's To4() != nil on a 16-byte address: the IPv4-mapped form `::ffff:a.b.c.d`. */
export function isIPv4Mapped(ip: Uint8Array): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false;
  return ip[10] === 0xff && ip[11] === 0xff;
}

/**
 * k8s.io/utils/net's ParseIPSloppy, which kube-proxy and the EndpointSlice controller use: a leading zero in an
 * IPv4 field is decimal (`010.0.0.1` is 10.0.0.1), and an IPv4-mapped IPv6 address is IPv4, in 4 bytes, as Go's
 * net.IP counts it. White space around the text is ignored (kube-proxy trims what it reads from a Service).
 * Null when it is not an address.
 */
export function parseIP(text: string): IP | null {
  const t = text.trim();
  if (t.includes(":")) {
    const bytes = new Uint8Array(16);
    if (!writeIPv6(bytes, 0, t, "sloppy")) return null;
    if (isIPv4Mapped(bytes)) return { family: "IPv4", bytes: bytes.slice(12) };
    return { family: "IPv6", bytes };
  }
  const bytes = new Uint8Array(4);
  return writeIPv4(bytes, 0, t, "sloppy") ? { family: "IPv4", bytes } : null;
}

/**
 * Go's net.ParseIP, which CoreDNS uses on hosts lines, ACL nets and reverse names: IPv4 has four decimal fields
 * without leading zeros (Go 1.17 on), and there is no zone. Always 16 bytes, IPv4 in its mapped form, as Go
 * stores it (isIPv4Mapped tells them apart). Undefined when Go would return nil.
 */
export function parseGoIP(text: string): Uint8Array | undefined {
  const out = new Uint8Array(16);
  // Go looks at the first `.` or `:` to pick the family.
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === ".") {
      out[10] = 0xff;
      out[11] = 0xff;
      return writeIPv4(out, 12, text, "strict") ? out : undefined;
    }
    if (c === ":") return writeIPv6(out, 0, text, "strict") ? out : undefined;
    if (c === "%") return undefined;
  }
  return undefined;
}

/** RFC 5952 text for the 16 bytes at `at`: lower case, the longest run (the first of equals) of two or more zero groups as `::`. */
export function formatIPv6(bytes: Uint8Array, at = 0): string {
  const groups = new Array<number>(8);
  for (let g = 0; g < 8; g++) groups[g] = ((bytes[at + 2 * g] ?? 0) << 8) | (bytes[at + 2 * g + 1] ?? 0);
  let bestStart = -1;
  let bestLen = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLen) {
      bestStart = i;
      bestLen = j - i;
    }
    i = j;
  }
  const hex = (from: number, to: number) => {
    let s = "";
    for (let g = from; g < to; g++)
      s += g === from ? (groups[g] as number).toString(16) : `:${(groups[g] as number).toString(16)}`;
    return s;
  };
  if (bestStart < 0) return hex(0, 8);
  return `${hex(0, bestStart)}::${hex(bestStart + bestLen, 8)}`;
}

/** Go's net.IP String(): a dotted quad for IPv4, RFC 5952 text for IPv6. */
export function formatIP(ip: IP): string {
  const b = ip.bytes;
  return ip.family === "IPv4" ? `${b[0]}.${b[1]}.${b[2]}.${b[3]}` : formatIPv6(b);
}

/** Go's IP.String() for 16 bytes as parseGoIP gives them: the mapped form prints as IPv4. */
export function goIPString(ip: Uint8Array): string {
  return isIPv4Mapped(ip) ? `${ip[12]}.${ip[13]}.${ip[14]}.${ip[15]}` : formatIPv6(ip);
}

/** Canonical text of an address (parseIP's reading), or null when it does not parse. */
export function normalizeIP(text: string): string | null {
  const ip = parseIP(text);
  return ip ? formatIP(ip) : null;
}

/** The family parseIP gives `text`, or null when it is not an address. */
export function ipFamilyOf(text: string): IPFamily | null {
  return parseIP(text)?.family ?? null;
}

/** The family an address's text is written in, without checking it: IPv6 when it has a `:`. */
export function familyOf(ip: string): IPFamily {
  return ip.includes(":") ? "IPv6" : "IPv4";
}

/** `host:port` for a URL or a dial string, as Go's net.JoinHostPort writes it: an IPv6 address in brackets. */
export function hostPort(ip: string, port: number | string): string {
  return familyOf(ip) === "IPv6" ? `[${ip}]:${port}` : `${ip}:${port}`;
}
