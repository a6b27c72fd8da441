import { formatIPv6 } from "../../wire/decode.js";

/**
 * Go's net.ParseIP, which CoreDNS uses on every hosts line and reverse name. Its rules decide which lines
 * count, so they are kept exactly: IPv4 has four decimal fields without leading zeros, IPv6 has groups of
 * at most four hex digits, one `::`, an optional dotted tail, and no zone. The result is always 16 bytes,
 * IPv4 in its mapped form (`::ffff:a.b.c.d`), as Go stores it.
 */
export function parseGoIP(text: string): Buffer | undefined {
  for (const ch of text) {
    if (ch === ".") return parseIPv4(text);
    if (ch === ":") return parseIPv6(text);
    if (ch === "%") return undefined;
  }
  return undefined;
}

/** Go's To4() != nil: an IPv4 address, given directly or in the mapped form. */
export function isIPv4(ip: Buffer): boolean {
  for (let i = 0; i < 10; i++) if (ip[i] !== 0) return false;
  return ip[10] === 0xff && ip[11] === 0xff;
}

/** Go's IP.String(): dotted quad for IPv4 (mapped included), RFC 5952 text otherwise. */
export function ipString(ip: Buffer): string {
  return isIPv4(ip) ? [...ip.subarray(12)].join(".") : formatIPv6(ip);
}

function parseIPv4(text: string): Buffer | undefined {
  const out = Buffer.alloc(16);
  out[10] = 0xff;
  out[11] = 0xff;
  return ipv4Fields(text, out, 12) ? out : undefined;
}

/** Fills four bytes of `out` at `at` from a dotted quad; false when Go would reject it. */
function ipv4Fields(text: string, out: Buffer, at: number): boolean {
  const fields = text.split(".");
  if (fields.length !== 4) return false;
  for (const [i, field] of fields.entries()) {
    // No sign, no spaces, no leading zero (Go 1.17+ rejects "010" as ambiguous octal).
    if (!/^\d{1,3}$/.test(field) || (field.length > 1 && field[0] === "0")) return false;
    const value = Number(field);
    if (value > 255) return false;
    out[at + i] = value;
  }
  return true;
}

/** The IPv6 grammar of Go's netip.ParseAddr; a zone makes net.ParseIP fail, so it fails here too. */
function parseIPv6(text: string): Buffer | undefined {
  if (text.includes("%")) return undefined;
  const ip = Buffer.alloc(16);
  let s = text;
  let ellipsis = -1;
  if (s.startsWith("::")) {
    ellipsis = 0;
    s = s.slice(2);
    if (s === "") return ip;
  }
  let i = 0;
  while (i < 16) {
    const group = /^[0-9a-fA-F]*/.exec(s)?.[0] ?? "";
    if (group.length === 0 || group.length > 4) return undefined;
    if (s[group.length] === ".") {
      // A dotted tail must take the last four bytes, either directly or after a `::`.
      if ((ellipsis < 0 && i !== 12) || i + 4 > 16) return undefined;
      if (!ipv4Fields(s, ip, i)) return undefined;
      s = "";
      i += 4;
      break;
    }
    ip.writeUInt16BE(Number.parseInt(group, 16), i);
    i += 2;
    s = s.slice(group.length);
    if (s === "") break;
    if (s[0] !== ":" || s.length === 1) return undefined;
    s = s.slice(1);
    if (s[0] === ":") {
      if (ellipsis >= 0) return undefined;
      ellipsis = i;
      s = s.slice(1);
      if (s === "") break;
    }
  }
  if (s !== "") return undefined;
  return expandEllipsis(ip, i, ellipsis);
}

/** Moves the groups after `::` to the end; a `::` must stand for at least one zero group. */
function expandEllipsis(ip: Buffer, filled: number, ellipsis: number): Buffer | undefined {
  if (filled === 16) return ellipsis >= 0 ? undefined : ip;
  if (ellipsis < 0) return undefined;
  const gap = 16 - filled;
  for (let j = filled - 1; j >= ellipsis; j--) ip[j + gap] = ip[j] as number;
  ip.fill(0, ellipsis, ellipsis + gap);
  return ip;
}
