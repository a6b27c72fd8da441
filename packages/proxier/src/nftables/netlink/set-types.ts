// Named sets and maps: the `type` declarations the renderer writes, turned into the key and data
// types, lengths and user data nft 1.0.6 gives them, and their elements' bytes.
import { commentUdata, joinBytes, udata, udataU32 } from "./anonymous-sets.js";
import * as C from "./constants.js";
import type { Verdict } from "./exprs.js";
import {
  type AddressFamily,
  concatWidth,
  parseNumber,
  portNumber,
  protocolNumber,
  UnsupportedSyntax,
  writeAddress,
  writePort,
} from "./values.js";
import type { NetlinkWriter } from "./writer.js";

interface Datatype {
  readonly id: number;
  readonly bytes: number;
  readonly byteorder: number;
  /** Writes the value of `text` at `at`. */
  write(buf: Uint8Array, at: number, text: string): void;
}

function datatypes(family: AddressFamily): Readonly<Record<string, Datatype>> {
  const addr = (id: number, bytes: number, fam: AddressFamily): Datatype => ({
    id,
    bytes,
    byteorder: C.BYTEORDER.BIG,
    write: (buf, at, t) => writeAddress(buf, at, t, fam),
  });
  const types: Record<string, Datatype> = {
    inet_proto: {
      id: C.TYPE.INET_PROTOCOL,
      bytes: 1,
      byteorder: C.BYTEORDER.HOST,
      write: (buf, at, t) => {
        buf[at] = protocolNumber(t);
      },
    },
    inet_service: {
      id: C.TYPE.INET_SERVICE,
      bytes: 2,
      byteorder: C.BYTEORDER.BIG,
      write: (buf, at, t) => writePort(buf, at, portNumber(t)),
    },
  };
  if (family === "ip") types.ipv4_addr = addr(C.TYPE.IPADDR, 4, "ip");
  else types.ipv6_addr = addr(C.TYPE.IP6ADDR, 16, "ip6");
  return types;
}

export interface SetLayout {
  readonly map: boolean;
  readonly keyType: number;
  readonly keyLen: number;
  readonly fields: readonly Datatype[];
  /** User data before the comment, as nft writes it for this declaration. */
  readonly udata: Uint8Array;
}

/** nft's id of a concatenation in a set's key "typeof" user data. */
const TYPEOF_CONCAT = 13;

/** "ipv4_addr . inet_proto . inet_service : verdict" and the like. */
export function setLayout(family: AddressFamily, type: string): SetLayout {
  const [keyText = "", dataText, extra] = type.split(" : ");
  if (extra !== undefined || (dataText !== undefined && dataText !== "verdict"))
    throw new UnsupportedSyntax(`set type ${type}`);
  const known = datatypes(family);
  const fields = keyText.split(" . ").map((name) => {
    const t = known[name];
    if (!t) throw new UnsupportedSyntax(`set key type ${name}`);
    return t;
  });
  const [only] = fields;
  const concat = fields.length > 1;
  const keyType = fields.reduce((id, f) => (id << C.TYPE_BITS) | f.id, 0);
  const keyLen = concat ? fields.reduce((n, f) => n + concatWidth(f.bytes), 0) : (only?.bytes ?? 0);
  const map = dataText !== undefined;
  const parts = [udataU32(C.UDATA.SET_KEYBYTEORDER, concat ? 0 : (only?.byteorder ?? 0))];
  if (map) parts.push(udataU32(C.UDATA.SET_DATABYTEORDER, 0));
  if (concat) parts.push(udata(3, joinBytes([udataU32(0, TYPEOF_CONCAT), udata(1, new Uint8Array(0))])));
  if (map) parts.push(udataU32(6, 0));
  return { map, keyType, keyLen, fields, udata: joinBytes(parts) };
}

export function setUserdata(layout: SetLayout, comment: string | undefined): Uint8Array {
  return comment === undefined
    ? layout.udata
    : joinBytes([layout.udata, commentUdata(C.UDATA.SET_COMMENT, comment)]);
}

/** Writes an element's key, as the set stores it, as attribute `type`. */
export function writeKey(w: NetlinkWriter, type: number, layout: SetLayout, key: readonly string[]): void {
  const fields = layout.fields;
  if (key.length !== fields.length) throw new UnsupportedSyntax(`element ${key.join(" . ")}`);
  let at = w.valueAt(type, layout.keyLen);
  const buf = w.buffer;
  for (let i = 0; i < fields.length; i++) {
    const f = fields[i] as Datatype;
    f.write(buf, at, key[i] ?? "");
    at += concatWidth(f.bytes);
  }
}

/** A verdict map element's value: `goto chain`, `jump chain`, `drop`, `accept`. */
export function parseVerdict(value: readonly string[]): Verdict {
  const [word, chain, extra] = value.length === 1 ? (value[0] ?? "").split(" ") : value;
  if (extra !== undefined) throw new UnsupportedSyntax(`verdict ${value.join(" ")}`);
  if (word === "drop" && chain === undefined) return { code: C.VERDICT_CODE.DROP };
  if (word === "accept" && chain === undefined) return { code: C.VERDICT_CODE.ACCEPT };
  if ((word === "goto" || word === "jump") && chain)
    return { code: word === "goto" ? C.VERDICT_CODE.GOTO : C.VERDICT_CODE.JUMP, chain };
  throw new UnsupportedSyntax(`verdict ${value.join(" ")}`);
}

/** `timeout 10800s` is given in seconds; the kernel takes milliseconds. */
export function timeoutMs(seconds: number): number {
  return parseNumber(String(seconds)) * 1000;
}
