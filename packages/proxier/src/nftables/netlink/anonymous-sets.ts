// The anonymous sets and maps a rule can carry (`{ a, b }`, `numgen ... map { ... }`), built as
// nft 1.0.6 builds them: the same flags, types, size, user data and elements, so that the kernel
// holds and `nft list` prints the same thing. Only their names differ: nft asks the kernel to pick
// one (`__map%d`, which costs a scan of every set in the table), the writer gives each its own.
import * as C from "./constants.js";
import type { Verdict } from "./exprs.js";
import { type AddressFamily, addressLength, type Prefix } from "./values.js";

/** An element of an address set: its key, an interval's end flag, nft's user data. */
export interface AnonymousElement {
  readonly key: Uint8Array;
  readonly intervalEnd?: boolean;
  readonly userdata?: Uint8Array;
}

/**
 * The elements: listed (address sets, which are few and small), or the targets of a DNAT map and
 * the verdicts of a verdict map, keyed 0..n-1 and written straight into the batch.
 */
export type AnonymousElements =
  | { readonly kind: "listed"; readonly elements: readonly AnonymousElement[] }
  | { readonly kind: "dnat"; readonly family: AddressFamily; readonly targets: readonly DnatTarget[] }
  | { readonly kind: "verdicts"; readonly verdicts: readonly Verdict[] };

/** An endpoint of a DNAT map, as text: address and port. */
export interface DnatTarget {
  readonly address: string;
  readonly port: number;
}

export interface AnonymousSet {
  readonly map: boolean;
  readonly flags: number;
  readonly keyType: number;
  readonly keyLen: number;
  readonly dataType?: number;
  readonly dataLen?: number;
  /** NFTA_SET_DESC_SIZE. */
  readonly size: number;
  readonly userdata: Uint8Array;
  readonly elements: AnonymousElements;
}

/** libnftnl's user data: type, length, value. */
export function udata(type: number, value: Uint8Array): Uint8Array {
  const out = new Uint8Array(2 + value.length);
  out[0] = type;
  out[1] = value.length;
  out.set(value, 2);
  return out;
}

export function udataU32(type: number, value: number): Uint8Array {
  const v = new Uint8Array(4);
  new DataView(v.buffer).setUint32(0, value, true);
  return udata(type, v);
}

export function joinBytes(parts: readonly Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** A comment as nft stores it: NUL-terminated text. */
export function commentUdata(type: number, text: string): Uint8Array {
  return udata(type, joinBytes([Buffer.from(text, "utf8"), Uint8Array.of(0)]));
}

// nft's ids for the expression an anonymous set is matched against (its "typeof"): a payload
// expression, and the protocol and field of `ip saddr` & co.
const EXPR_PAYLOAD = 7;
const PROTO_DESC = { ip: 12, ip6: 13 } as const;
const FIELD = { ip: { saddr: 11, daddr: 12 }, ip6: { saddr: 8, daddr: 9 } } as const;
/** nft's id of a verdict expression, the data "typeof" of a verdict map. */
const EXPR_VERDICT = 1;

function addressTypeof(family: AddressFamily, field: "saddr" | "daddr"): Uint8Array {
  const inner = joinBytes([udataU32(0, PROTO_DESC[family]), udataU32(1, FIELD[family][field])]);
  return udata(3, joinBytes([udataU32(0, EXPR_PAYLOAD), udata(1, inner)]));
}

const addressType = (family: AddressFamily) => (family === "ip" ? C.TYPE.IPADDR : C.TYPE.IP6ADDR);

/**
 * `ip saddr { a, b/len, ... }` with more than one element. With any prefix it is an interval set
 * whose ranges nft merges, sorts and writes as start and end-plus-one elements; otherwise a plain one.
 */
export function addressSet(
  family: AddressFamily,
  field: "saddr" | "daddr",
  items: readonly Prefix[],
): AnonymousSet {
  const bytes = addressLength(family);
  const interval = items.some((p) => p.explicit);
  const typeofData = addressTypeof(family, field);
  const keyOrder = udataU32(C.UDATA.SET_KEYBYTEORDER, C.BYTEORDER.BIG);
  if (!interval) {
    return {
      map: false,
      flags: C.SET_FLAG.ANONYMOUS | C.SET_FLAG.CONSTANT,
      keyType: addressType(family),
      keyLen: bytes,
      size: items.length,
      userdata: joinBytes([keyOrder, typeofData]),
      elements: { kind: "listed", elements: items.map((p) => ({ key: p.bytes })) },
    };
  }
  const { elements, size } = intervalElements(items, bytes);
  return {
    map: false,
    flags: C.SET_FLAG.ANONYMOUS | C.SET_FLAG.CONSTANT | C.SET_FLAG.INTERVAL,
    keyType: addressType(family),
    keyLen: bytes,
    size,
    userdata: joinBytes([keyOrder, udataU32(C.UDATA.SET_MERGE_ELEMENTS, 1), typeofData]),
    elements: { kind: "listed", elements },
  };
}

const toBig = (b: Uint8Array) => b.reduce((n, x) => (n << 8n) | BigInt(x), 0n);
function fromBig(n: bigint, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  let v = n;
  for (let i = bytes - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

/** NFTNL_SET_ELEM_F_INTERVAL_OPEN in an element's user data: the range runs to the end of the space. */
const OPEN_INTERVAL = udataU32(1, 1);

function intervalElements(
  items: readonly Prefix[],
  bytes: number,
): { elements: AnonymousElement[]; size: number } {
  const space = 1n << BigInt(bytes * 8);
  const ranges = items
    .map((p) => {
      const start = toBig(p.bytes);
      return [start, start + (1n << BigInt(bytes * 8 - p.length))] as const;
    })
    .sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  const merged: [bigint, bigint][] = [];
  for (const [start, end] of ranges) {
    const last = merged.at(-1);
    if (!last || start > last[1]) merged.push([start, end]);
    else if (end > last[1]) last[1] = end;
  }
  const elements: AnonymousElement[] = [];
  // Each range is a start and an end-plus-one flagged as an interval end; nft also marks the
  // space before the first range as not matching, and counts the end of an open range in the size.
  const first = merged[0];
  if (first && first[0] > 0n) elements.push({ key: fromBig(0n, bytes), intervalEnd: true });
  let size = elements.length;
  for (const [start, end] of merged) {
    size += 2;
    if (end >= space) {
      elements.push({ key: fromBig(start, bytes), userdata: OPEN_INTERVAL });
      continue;
    }
    elements.push({ key: fromBig(start, bytes) });
    elements.push({ key: fromBig(end, bytes), intervalEnd: true });
  }
  return { elements, size };
}

const DNAT_MAP_UDATA = joinBytes([
  udataU32(C.UDATA.SET_KEYBYTEORDER, C.BYTEORDER.HOST),
  udataU32(C.UDATA.SET_DATABYTEORDER, 0),
  udataU32(6, 0),
]);

/** `numgen random mod N map { i : addr . port }`: integer keys in host order, concatenated data. */
export function dnatMap(family: AddressFamily, targets: readonly DnatTarget[]): AnonymousSet {
  return {
    map: true,
    flags: C.SET_FLAG.ANONYMOUS | C.SET_FLAG.CONSTANT | C.SET_FLAG.MAP,
    keyType: C.TYPE.INTEGER,
    keyLen: 4,
    dataType: (addressType(family) << C.TYPE_BITS) | C.TYPE.INET_SERVICE,
    dataLen: addressLength(family) + 4,
    size: targets.length,
    userdata: DNAT_MAP_UDATA,
    elements: { kind: "dnat", family, targets },
  };
}

const VERDICT_MAP_UDATA = joinBytes([
  udataU32(C.UDATA.SET_KEYBYTEORDER, C.BYTEORDER.HOST),
  udataU32(C.UDATA.SET_DATABYTEORDER, 0),
  udata(4, joinBytes([udataU32(0, EXPR_VERDICT), udata(1, new Uint8Array(0))])),
  udataU32(6, 0),
]);

/** `numgen random mod N vmap { i : goto chain }`. */
export function verdictMap(verdicts: readonly Verdict[]): AnonymousSet {
  return {
    map: true,
    flags: C.SET_FLAG.ANONYMOUS | C.SET_FLAG.CONSTANT | C.SET_FLAG.MAP,
    keyType: C.TYPE.INTEGER,
    keyLen: 4,
    dataType: C.NFT_DATA_VERDICT,
    dataLen: 16,
    size: verdicts.length,
    userdata: VERDICT_MAP_UDATA,
    elements: { kind: "verdicts", verdicts },
  };
}
