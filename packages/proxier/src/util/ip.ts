// Small IP helpers. Kubernetes prints addresses the way Go's net.IP.String() does, and the
// rules we render must carry exactly those strings, so parsing normalises to that form.

export type IPFamily = "IPv4" | "IPv6";

export interface ParsedIP {
  readonly family: IPFamily;
  /** 4 or 16 bytes, network order. */
  readonly bytes: Uint8Array;
}

export interface ParsedCIDR {
  readonly ip: ParsedIP;
  readonly prefix: number;
}

function parseIPv4(text: string): Uint8Array | null {
  const parts = text.split(".");
  if (parts.length !== 4) return null;
  const out = new Uint8Array(4);
  for (let i = 0; i < 4; i++) {
    const part = parts[i] ?? "";
    // Go's ParseIPSloppy (used by kube-proxy) accepts leading zeros as decimal.
    if (!/^[0-9]{1,3}$/.test(part)) return null;
    const n = Number(part);
    if (n > 255) return null;
    out[i] = n;
  }
  return out;
}

function parseIPv6(text: string): Uint8Array | null {
  if (!/^[0-9a-fA-F:.]+$/.test(text)) return null;
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const groups = (s: string): number[] | null => {
    if (s === "") return [];
    const out: number[] = [];
    const items = s.split(":");
    for (let i = 0; i < items.length; i++) {
      const item = items[i] ?? "";
      if (i === items.length - 1 && item.includes(".")) {
        const v4 = parseIPv4(item);
        if (!v4) return null;
        out.push(((v4[0] ?? 0) << 8) | (v4[1] ?? 0), ((v4[2] ?? 0) << 8) | (v4[3] ?? 0));
      } else {
        if (!/^[0-9a-fA-F]{1,4}$/.test(item)) return null;
        out.push(Number.parseInt(item, 16));
      }
    }
    return out;
  };
  const head = groups(halves[0] ?? "");
  const tail = halves.length === 2 ? groups(halves[1] ?? "") : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (halves.length === 2 ? missing < 1 : missing !== 0) return null;
  const all = [...head, ...new Array<number>(missing).fill(0), ...tail];
  const out = new Uint8Array(16);
  all.forEach((g, i) => {
    out[2 * i] = g >> 8;
    out[2 * i + 1] = g & 0xff;
  });
  return out;
}

export function parseIP(text: string): ParsedIP | null {
  const t = text.trim();
  if (t.includes(":")) {
    const bytes = parseIPv6(t);
    if (!bytes) return null;
    // An IPv4-mapped IPv6 address is an IPv4 address to Go.
    if (bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff) {
      return { family: "IPv4", bytes: bytes.slice(12) };
    }
    return { family: "IPv6", bytes };
  }
  const bytes = parseIPv4(t);
  return bytes ? { family: "IPv4", bytes } : null;
}

export function formatIP(ip: ParsedIP): string {
  if (ip.family === "IPv4") return Array.from(ip.bytes).join(".");
  const groups: number[] = [];
  for (let i = 0; i < 16; i += 2) groups.push(((ip.bytes[i] ?? 0) << 8) | (ip.bytes[i + 1] ?? 0));
  // RFC 5952: compress the longest run (first on ties) of two or more zero groups.
  let bestStart = -1;
  let bestLen = 0;
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
  const hex = groups.map((g) => g.toString(16));
  if (bestLen < 2) return hex.join(":");
  return `${hex.slice(0, bestStart).join(":")}::${hex.slice(bestStart + bestLen).join(":")}`;
}

/** Canonical text of an IP, or null when it does not parse. */
export function normalizeIP(text: string): string | null {
  const ip = parseIP(text);
  return ip ? formatIP(ip) : null;
}

export function ipFamilyOf(text: string): IPFamily | null {
  return parseIP(text)?.family ?? null;
}

export function parseCIDR(text: string): ParsedCIDR | null {
  const [addr, prefixText, extra] = text.trim().split("/");
  if (addr === undefined || prefixText === undefined || extra !== undefined) return null;
  if (!/^[0-9]{1,3}$/.test(prefixText)) return null;
  const ip = parseIP(addr);
  if (!ip || addr.includes(":") !== (ip.family === "IPv6")) return null;
  const prefix = Number(prefixText);
  if (prefix > ip.bytes.length * 8) return null;
  const masked = new Uint8Array(ip.bytes.length);
  for (let i = 0; i < masked.length; i++) {
    const bits = Math.max(0, Math.min(8, prefix - 8 * i));
    masked[i] = (ip.bytes[i] ?? 0) & ((0xff << (8 - bits)) & 0xff);
  }
  return { ip: { family: ip.family, bytes: masked }, prefix };
}

/** Canonical (masked) text of a CIDR, as Go's IPNet.String() prints it. */
export function formatCIDR(cidr: ParsedCIDR): string {
  return `${formatIP(cidr.ip)}/${cidr.prefix}`;
}

export function cidrContains(cidr: ParsedCIDR, ip: ParsedIP): boolean {
  if (cidr.ip.family !== ip.family) return false;
  for (let bit = 0; bit < cidr.prefix; bit++) {
    const byte = bit >> 3;
    const mask = 0x80 >> (bit & 7);
    if (((cidr.ip.bytes[byte] ?? 0) & mask) !== ((ip.bytes[byte] ?? 0) & mask)) return false;
  }
  return true;
}

/** True when `ip` (text) falls inside `cidr` (text); false when either does not parse. */
export function cidrContainsText(cidr: string, ip: string): boolean {
  const c = parseCIDR(cidr);
  const i = parseIP(ip);
  return c !== null && i !== null && cidrContains(c, i);
}
