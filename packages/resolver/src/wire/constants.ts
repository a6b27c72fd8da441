/** Response codes, including the EDNS extended ones (RFC 6891). */
export const Rcode = {
  NOERROR: 0,
  FORMERR: 1,
  SERVFAIL: 2,
  NXDOMAIN: 3,
  NOTIMP: 4,
  REFUSED: 5,
  BADVERS: 16,
} as const;

export const Opcode = { QUERY: 0, NOTIFY: 4 } as const;

export const ClassIN = 1;

const rcodeNames: Record<number, string> = {
  0: "NOERROR",
  1: "FORMERR",
  2: "SERVFAIL",
  3: "NXDOMAIN",
  4: "NOTIMP",
  5: "REFUSED",
  6: "YXDOMAIN",
  7: "YXRRSET",
  8: "NXRRSET",
  9: "NOTAUTH",
  10: "NOTZONE",
  16: "BADVERS",
};

export function rcodeName(rcode: number): string {
  return rcodeNames[rcode] ?? `RCODE${rcode}`;
}

/** Record types this package knows by name; anything else is written RFC 3597 style, `TYPE<n>`. */
const typeNumbers: Record<string, number> = {
  A: 1,
  NS: 2,
  CNAME: 5,
  SOA: 6,
  PTR: 12,
  HINFO: 13,
  MX: 15,
  TXT: 16,
  AAAA: 28,
  SRV: 33,
  NAPTR: 35,
  DNAME: 39,
  OPT: 41,
  DS: 43,
  RRSIG: 46,
  NSEC: 47,
  DNSKEY: 48,
  IXFR: 251,
  AXFR: 252,
  ANY: 255,
  CAA: 257,
};

const typeNames: Record<number, string> = Object.fromEntries(
  Object.entries(typeNumbers).map(([name, n]) => [n, name]),
);

export function typeName(type: number): string {
  return typeNames[type] ?? `TYPE${type}`;
}

/** The numeric type for a mnemonic (`A`, `srv`, `TYPE65280`); undefined when it is neither. */
export function typeNumber(name: string): number | undefined {
  const upper = name.toUpperCase();
  const known = typeNumbers[upper];
  if (known !== undefined) return known;
  const m = /^TYPE(\d{1,5})$/.exec(upper);
  if (!m) return undefined;
  const n = Number(m[1]);
  return n <= 0xffff ? n : undefined;
}

export function className(cls: number): string {
  if (cls === 1) return "IN";
  if (cls === 3) return "CH";
  if (cls === 4) return "HS";
  if (cls === 254) return "NONE";
  if (cls === 255) return "ANY";
  return `CLASS${cls}`;
}
