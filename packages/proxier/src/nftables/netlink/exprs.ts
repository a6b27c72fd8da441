// nf_tables expressions as data, and their netlink form (one NFTA_LIST_ELEM each inside
// NFTA_RULE_EXPRESSIONS). Registers are numbered as nft numbers them on the wire.
import * as C from "./constants.js";
import { cString, type NetlinkWriter } from "./writer.js";

export interface Verdict {
  readonly code: number;
  readonly chain?: string;
}

export type Expr =
  | {
      readonly k: "payload";
      readonly base: number;
      readonly offset: number;
      readonly len: number;
      readonly dreg: number;
    }
  | { readonly k: "meta"; readonly key: number; readonly dreg: number }
  | { readonly k: "metaSet"; readonly key: number; readonly sreg: number }
  | { readonly k: "ct"; readonly key: number; readonly dreg: number }
  | { readonly k: "fib"; readonly flags: number; readonly result: number; readonly dreg: number }
  | { readonly k: "cmp"; readonly sreg: number; readonly op: number; readonly data: Uint8Array }
  | {
      readonly k: "bitwise";
      readonly sreg: number;
      readonly dreg: number;
      readonly mask: Uint8Array;
      readonly xor: Uint8Array;
    }
  | {
      readonly k: "lookup";
      readonly set: string;
      readonly sreg: number;
      readonly dreg?: number;
      readonly invert?: boolean;
      /** Batch-local id of a set created in the same batch. */
      readonly setId?: number;
    }
  | { readonly k: "immediate"; readonly dreg: number; readonly data: Uint8Array }
  | { readonly k: "verdict"; readonly verdict: Verdict }
  | {
      readonly k: "nat";
      readonly family: number;
      readonly addrReg: number;
      readonly protoReg: number;
      readonly flags: number;
    }
  | { readonly k: "masq"; readonly flags: number }
  | { readonly k: "reject"; readonly type: number; readonly code: number }
  | { readonly k: "numgen"; readonly dreg: number; readonly modulus: number }
  | { readonly k: "dynset"; readonly set: string; readonly op: number; readonly sreg: number };

/** NFTA_DATA_VERDICT { code, chain } inside whatever attribute is open. */
export function writeVerdict(w: NetlinkWriter, type: number, v: Verdict): void {
  w.nest(type);
  w.nest(C.DATA.VERDICT);
  w.u32(C.VERDICT.CODE, v.code);
  if (v.chain !== undefined) w.str(C.VERDICT.CHAIN, v.chain);
  w.endNest();
  w.endNest();
}

export function writeValue(w: NetlinkWriter, type: number, data: Uint8Array): void {
  w.nest(type);
  w.bytes(C.DATA.VALUE, data);
  w.endNest();
}

function writeBody(w: NetlinkWriter, e: Expr): void {
  switch (e.k) {
    case "payload":
      w.u32(C.PAYLOAD.DREG, e.dreg);
      w.u32(C.PAYLOAD.BASE, e.base);
      w.u32(C.PAYLOAD.OFFSET, e.offset);
      w.u32(C.PAYLOAD.LEN, e.len);
      return;
    case "meta":
    case "ct":
      w.u32(C.META.DREG, e.dreg);
      w.u32(C.META.KEY, e.key);
      return;
    case "metaSet":
      w.u32(C.META.KEY, e.key);
      w.u32(C.META.SREG, e.sreg);
      return;
    case "fib":
      w.u32(C.FIB.DREG, e.dreg);
      w.u32(C.FIB.RESULT, e.result);
      w.u32(C.FIB.FLAGS, e.flags);
      return;
    case "cmp":
      w.u32(C.CMP.SREG, e.sreg);
      w.u32(C.CMP.OP, e.op);
      writeValue(w, C.CMP.DATA, e.data);
      return;
    case "bitwise":
      w.u32(C.BITWISE.SREG, e.sreg);
      w.u32(C.BITWISE.DREG, e.dreg);
      w.u32(C.BITWISE.LEN, e.mask.length);
      writeValue(w, C.BITWISE.MASK, e.mask);
      writeValue(w, C.BITWISE.XOR, e.xor);
      return;
    case "lookup":
      w.u32(C.LOOKUP.SREG, e.sreg);
      w.str(C.LOOKUP.SET, e.set);
      if (e.setId !== undefined) w.u32(C.LOOKUP.SET_ID, e.setId);
      if (e.dreg !== undefined) w.u32(C.LOOKUP.DREG, e.dreg);
      if (e.invert) w.u32(C.LOOKUP.FLAGS, C.LOOKUP_F_INV);
      return;
    case "immediate":
      w.u32(C.IMMEDIATE.DREG, e.dreg);
      writeValue(w, C.IMMEDIATE.DATA, e.data);
      return;
    case "verdict":
      w.u32(C.IMMEDIATE.DREG, C.REG_VERDICT);
      writeVerdict(w, C.IMMEDIATE.DATA, e.verdict);
      return;
    case "nat":
      w.u32(C.NAT.TYPE, C.NAT_DNAT);
      w.u32(C.NAT.FAMILY, e.family);
      w.u32(C.NAT.REG_ADDR_MIN, e.addrReg);
      w.u32(C.NAT.REG_PROTO_MIN, e.protoReg);
      if (e.flags !== 0) w.u32(C.NAT.FLAGS, e.flags);
      return;
    case "masq":
      w.u32(C.MASQ.FLAGS, e.flags);
      return;
    case "reject":
      w.u32(C.REJECT.TYPE, e.type);
      w.u8(C.REJECT.ICMP_CODE, e.code);
      return;
    case "numgen":
      w.u32(C.NUMGEN.DREG, e.dreg);
      w.u32(C.NUMGEN.MODULUS, e.modulus);
      w.u32(C.NUMGEN.TYPE, C.NUMGEN_RANDOM);
      return;
    case "dynset":
      w.str(C.DYNSET.SET_NAME, e.set);
      w.u32(C.DYNSET.OP, e.op);
      w.u32(C.DYNSET.SREG_KEY, e.sreg);
      return;
  }
}

const NAMES: Readonly<Record<Expr["k"], Uint8Array>> = Object.fromEntries(
  Object.entries({
    payload: "payload",
    meta: "meta",
    metaSet: "meta",
    ct: "ct",
    fib: "fib",
    cmp: "cmp",
    bitwise: "bitwise",
    lookup: "lookup",
    immediate: "immediate",
    verdict: "immediate",
    nat: "nat",
    masq: "masq",
    reject: "reject",
    numgen: "numgen",
    dynset: "dynset",
  } satisfies Record<Expr["k"], string>).map(([k, name]) => [k, cString(name)]),
) as Record<Expr["k"], Uint8Array>;

export function writeExpressions(w: NetlinkWriter, exprs: readonly Expr[]): void {
  w.nest(C.RULE.EXPRESSIONS);
  for (const e of exprs) {
    w.nest(C.LIST_ELEM);
    w.cstr(C.EXPR.NAME, NAMES[e.k]);
    w.nest(C.EXPR.DATA);
    writeBody(w, e);
    w.endNest();
    w.endNest();
  }
  w.endNest();
}
