/**
 * The grammar of IP address text, written straight into a byte array: one reader per family, shared by every
 * parser in this package and by the hot writers that fill a buffer in place (the resolver's wire encoder, the
 * proxier's netlink batch). The IPv6 grammar is Go's (netip.ParseAddr, which net.ParseIP uses): groups of one to
 * four hex digits, at most one `::` standing for at least one zero group, an optional dotted IPv4 tail in the last
 * four bytes, no zone. Only the IPv4 fields differ between the Go functions followed here: see IPv4Fields.
 */

/**
 * How the fields of a dotted quad are read. `"sloppy"`: a leading zero is decimal (`010` is 10), as Go's
 * net.ParseIP did before Go 1.17 and k8s.io/utils/net's ParseIPSloppy (kube-proxy, the EndpointSlice controller)
 * still does. `"strict"`: a leading zero is refused, as Go's net.ParseIP does since Go 1.17 (CoreDNS) and
 * inet_pton does (nft).
 */
export type IPv4Fields = "sloppy" | "strict";

const DOT = 46;
const COLON = 58;

/** Reads text[start, end) as a dotted quad into out[at, at + 4); false when it is not one. */
function readIPv4(text: string, start: number, end: number, out: Uint8Array, at: number, fields: IPv4Fields) {
  let field = 0;
  let value = 0;
  let digits = 0;
  for (let i = start; i < end; i++) {
    const c = text.charCodeAt(i);
    if (c === DOT) {
      if (digits === 0 || field === 3) return false;
      out[at + field++] = value;
      value = 0;
      digits = 0;
    } else if (c >= 48 && c <= 57) {
      if (digits === 1 && value === 0 && fields === "strict") return false;
      value = value * 10 + (c - 48);
      if (++digits > 3 || value > 255) return false;
    } else {
      return false;
    }
  }
  if (digits === 0 || field !== 3) return false;
  out[at + 3] = value;
  return true;
}

/** A dotted quad into out[at, at + 4); false when `text` is not one (the four bytes are then undefined). */
export function writeIPv4(out: Uint8Array, at: number, text: string, fields: IPv4Fields): boolean {
  return readIPv4(text, 0, text.length, out, at, fields);
}

function hexDigit(c: number): number {
  if (c >= 48 && c <= 57) return c - 48;
  if (c >= 97 && c <= 102) return c - 87;
  if (c >= 65 && c <= 70) return c - 55;
  return -1;
}

/**
 * IPv6 text into out[at, at + 16), in Go's grammar (see the top of this file); false when `text` is not an IPv6
 * address (the sixteen bytes are then undefined). Every byte is written, so `out` may be reused scratch space.
 */
export function writeIPv6(out: Uint8Array, at: number, text: string, fields: IPv4Fields): boolean {
  const end = text.length;
  let i = 0;
  let n = 0;
  let ellipsis = -1;
  if (end >= 2 && text.charCodeAt(0) === COLON && text.charCodeAt(1) === COLON) {
    ellipsis = 0;
    i = 2;
    if (i === end) {
      out.fill(0, at, at + 16);
      return true;
    }
  }
  while (n < 16) {
    let value = 0;
    let j = i;
    for (; j < end && j - i < 5; j++) {
      const d = hexDigit(text.charCodeAt(j));
      if (d < 0) break;
      value = value * 16 + d;
    }
    if (j === i || j - i > 4) return false;
    if (j < end && text.charCodeAt(j) === DOT) {
      // A dotted tail takes the last four bytes: directly after six groups, or anywhere after a `::`.
      if ((ellipsis < 0 && n !== 12) || n + 4 > 16) return false;
      if (!readIPv4(text, i, end, out, at + n, fields)) return false;
      n += 4;
      i = end;
      break;
    }
    out[at + n] = value >> 8;
    out[at + n + 1] = value & 0xff;
    n += 2;
    i = j;
    if (i === end) break;
    if (text.charCodeAt(i) !== COLON || i + 1 === end) return false;
    i++;
    if (text.charCodeAt(i) === COLON) {
      if (ellipsis >= 0) return false;
      ellipsis = n;
      i++;
      if (i === end) break;
    }
  }
  if (i !== end) return false;
  // A `::` must stand for at least one zero group; without one, all eight groups must be there.
  if (n === 16) return ellipsis < 0;
  if (ellipsis < 0) return false;
  const gap = 16 - n;
  out.copyWithin(at + ellipsis + gap, at + ellipsis, at + n);
  out.fill(0, at + ellipsis, at + ellipsis + gap);
  return true;
}
