/**
 * miekg/dns's mnemonic tables (StringToType, StringToClass, StringToRcode), the one copy every plugin reads.
 * Looked up exactly as written, as upstream indexes Go maps: `in` or `a` is not a class or type, and `None` and
 * `Reserved` are types only under that spelling. A plugin that upper-cases first (rewrite) does so itself.
 * Turned back into text for template's `.Class`, `.Type` and metric labels, where a number miekg has no name for
 * becomes "".
 */

// biome-ignore format: a lookup table reads better packed
const TYPES: Record<string, number> = {
  None: 0, A: 1, NS: 2, MD: 3, MF: 4, CNAME: 5, SOA: 6, MB: 7, MG: 8, MR: 9, NULL: 10, PTR: 12,
  HINFO: 13, MINFO: 14, MX: 15, TXT: 16, RP: 17, AFSDB: 18, X25: 19, ISDN: 20, RT: 21, "NSAP-PTR": 23,
  SIG: 24, KEY: 25, PX: 26, GPOS: 27, AAAA: 28, LOC: 29, NXT: 30, EID: 31, NIMLOC: 32, SRV: 33, ATMA: 34,
  NAPTR: 35, KX: 36, CERT: 37, DNAME: 39, OPT: 41, APL: 42, DS: 43, SSHFP: 44, IPSECKEY: 45, RRSIG: 46,
  NSEC: 47, DNSKEY: 48, DHCID: 49, NSEC3: 50, NSEC3PARAM: 51, TLSA: 52, SMIMEA: 53, HIP: 55, NINFO: 56,
  RKEY: 57, TALINK: 58, CDS: 59, CDNSKEY: 60, OPENPGPKEY: 61, CSYNC: 62, ZONEMD: 63, SVCB: 64, HTTPS: 65,
  SPF: 99, UINFO: 100, UID: 101, GID: 102, UNSPEC: 103, NID: 104, L32: 105, L64: 106, LP: 107,
  EUI48: 108, EUI64: 109, NXNAME: 128, TKEY: 249, TSIG: 250, IXFR: 251, AXFR: 252, MAILB: 253,
  MAILA: 254, ANY: 255, URI: 256, CAA: 257, AVC: 258, AMTRELAY: 260, RESINFO: 261, TA: 32768, DLV: 32769,
  Reserved: 65535,
};

const CLASSES: Record<string, number> = { IN: 1, CS: 2, CH: 3, HS: 4, NONE: 254, ANY: 255 };

// biome-ignore format: a lookup table reads better packed
const RCODES: Record<string, number> = {
  NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, NOTIMPL: 4, REFUSED: 5, YXDOMAIN: 6,
  YXRRSET: 7, NXRRSET: 8, NOTAUTH: 9, NOTZONE: 10, DSOTYPENI: 11, BADSIG: 16, BADKEY: 17, BADTIME: 18,
  BADMODE: 19, BADNAME: 20, BADALG: 21, BADTRUNC: 22, BADCOOKIE: 23,
};

const exact = (table: Record<string, number>, name: string) =>
  Object.hasOwn(table, name) ? table[name] : undefined;

const reverse = (table: Record<string, number>) =>
  new Map(Object.entries(table).map(([name, n]) => [n, name] as const));

const TYPE_NAMES = reverse(TYPES);
const CLASS_NAMES = reverse(CLASSES);

export const CLASS_ANY = 255;
export const TYPE_ANY = 255;

export const typeByName = (name: string): number | undefined => exact(TYPES, name);
export const classByName = (name: string): number | undefined => exact(CLASSES, name);
export const rcodeByName = (name: string): number | undefined => exact(RCODES, name);

export const typeText = (type: number): string => TYPE_NAMES.get(type) ?? "";
export const classText = (cls: number): string => CLASS_NAMES.get(cls) ?? "";
