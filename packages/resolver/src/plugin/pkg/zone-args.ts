import { isIPv4Mapped, parseGoIP } from "@switchyard/basics";
import { normalizeZone } from "../zones.js";

/**
 * Zones written as plugin arguments, normalised as CoreDNS's Host.NormalizeExact does: a transport prefix
 * and a numeric port are dropped, a CIDR becomes the reverse zones it covers (`10.0.0.0/8` →
 * `10.in-addr.arpa.`), and anything else is made absolute and lower case. Arguments CoreDNS cannot read
 * are skipped silently, as there.
 */
export function normalizeZoneArgs(args: readonly string[]): string[] {
  return args.flatMap(normalizeZoneArg);
}

function normalizeZoneArg(arg: string): string[] {
  let s = arg.replace(/^(dns|tls|grpc|https|quic):\/\//, "");
  const colon = s.lastIndexOf(":");
  if (colon === s.length - 1) return [];
  if (colon >= 0 && /^[+-]?\d+$/.test(s.slice(colon + 1))) s = s.slice(0, colon);
  if (s.length > 255) return [];
  const slash = s.indexOf("/");
  const cidr = slash < 0 ? undefined : reverseZonesOf(s.slice(0, slash), s.slice(slash + 1));
  return (cidr ?? [s]).map(normalizeZone);
}

/** The reverse zones for IP/MASK split on label boundaries, or undefined when it is not a CIDR. */
function reverseZonesOf(address: string, maskText: string): string[] | undefined {
  const ip = parseGoIP(address);
  if (!ip || !/^\d{1,3}$/.test(maskText)) return undefined;
  const v4 = isIPv4Mapped(ip) && !address.includes(":");
  const bits = v4 ? 32 : 128;
  const ones = Number(maskText);
  if (ones > bits) return undefined;
  const digit = v4 ? 8 : 4;
  const rounded = Math.ceil(ones / digit) * digit;
  const base = v4 ? [...ip.subarray(12)] : [...ip].flatMap((b) => [b >> 4, b & 0xf]);
  const masked = base.map((d, i) => maskDigit(d, ones - i * digit, digit));
  const count = 2 ** (rounded - ones);
  const zones: string[] = [];
  for (let n = 0; n < count; n++) {
    const digits = masked.slice(0, rounded / digit);
    if (digits.length > 0) digits[digits.length - 1] = (digits.at(-1) as number) + n;
    const labels = digits.reverse().map((d) => (v4 ? String(d) : d.toString(16)));
    zones.push([...labels, v4 ? "in-addr.arpa" : "ip6.arpa"].join("."));
  }
  return zones;
}

/** Keeps the first `keep` bits of a `width`-bit digit (all of them, or none). */
function maskDigit(digit: number, keep: number, width: number): number {
  if (keep >= width) return digit;
  if (keep <= 0) return 0;
  return digit & (((1 << keep) - 1) << (width - keep));
}
