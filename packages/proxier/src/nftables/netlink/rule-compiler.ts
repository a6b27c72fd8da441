// Compiles the rule text the renderer writes into nf_tables expressions, as nft 1.0.6 compiles
// it: the same loads, registers, shortcuts (a prefix on a byte boundary loads fewer bytes, a set of
// one element is a comparison) and anonymous sets. Only the rule language the renderer speaks is
// understood; anything else throws UnsupportedSyntax and the transaction goes to `nft` instead.
import { type AnonymousSet, addressSet, dnatMap, verdictMap } from "./anonymous-sets.js";
import * as C from "./constants.js";
import type { Expr, Verdict } from "./exprs.js";
import {
  type AddressFamily,
  addressBytes,
  hostU32,
  interfaceNameBytes,
  type Prefix,
  parseNumber,
  portBytes,
  portNumber,
  prefixMask,
  prefixOf,
  protocolNumber,
  UnsupportedSyntax,
} from "./values.js";

/** Gives an anonymous set its name and batch id, writing it (before the rule that uses it). */
export type AnonymousSetSink = (set: AnonymousSet) => { name: string; id: number };

/** Words of a rule: runs of text between spaces, `{`, `}` and `,`, which are words of their own. */
function tokenize(text: string): string[] {
  const out: string[] = [];
  const n = text.length;
  let i = 0;
  while (i < n) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 9 || c === 10) {
      i++;
    } else if (c === 123 || c === 125 || c === 44) {
      out.push(c === 123 ? "{" : c === 125 ? "}" : ",");
      i++;
    } else if (c === 34) {
      const close = text.indexOf('"', i + 1);
      if (close < 0) throw new UnsupportedSyntax("unterminated string");
      out.push(text.slice(i, close + 1));
      i = close + 1;
    } else {
      let j = i + 1;
      for (; j < n; j++) {
        const d = text.charCodeAt(j);
        if (d === 32 || d === 9 || d === 10 || d === 123 || d === 125 || d === 44) break;
      }
      out.push(text.slice(i, j));
      i = j;
    }
  }
  return out;
}

class Tokens {
  readonly #items: string[];
  #at = 0;
  constructor(text: string) {
    this.#items = tokenize(text);
  }
  peek(ahead = 0): string | undefined {
    return this.#items[this.#at + ahead];
  }
  next(): string {
    const t = this.#items[this.#at++];
    if (t === undefined) throw new UnsupportedSyntax("rule ends early");
    return t;
  }
  expect(...words: string[]): void {
    for (const w of words) {
      const t = this.next();
      if (t !== w) throw new UnsupportedSyntax(`expected ${w}, found ${t}`);
    }
  }
  done(): boolean {
    return this.#at >= this.#items.length;
  }
  /** Items between `{` (already read) and `}`, split at commas. */
  braced(): string[][] {
    const groups: string[][] = [[]];
    for (;;) {
      const t = this.next();
      if (t === "}") break;
      if (t === ",") groups.push([]);
      else groups.at(-1)?.push(t);
    }
    if (groups.some((g) => g.length === 0)) throw new UnsupportedSyntax("empty set element");
    return groups;
  }
}

interface Selector {
  readonly bytes: number;
  load(dreg: number, bytes?: number): Expr;
  /** `ip saddr` & co: the family and field an anonymous set of addresses is typed by. */
  readonly address?: { readonly family: AddressFamily; readonly field: "saddr" | "daddr" };
}

function makeAddressSelector(family: AddressFamily, field: "saddr" | "daddr"): Selector {
  const v4 = family === "ip";
  const offset = v4 ? (field === "saddr" ? 12 : 16) : field === "saddr" ? 8 : 24;
  const size = v4 ? 4 : 16;
  return {
    bytes: size,
    load: (dreg, bytes = size) => ({ k: "payload", base: C.PAYLOAD_BASE.NETWORK, offset, len: bytes, dreg }),
    address: { family, field },
  };
}

const ADDRESS_SELECTORS = {
  ip: { saddr: makeAddressSelector("ip", "saddr"), daddr: makeAddressSelector("ip", "daddr") },
  ip6: { saddr: makeAddressSelector("ip6", "saddr"), daddr: makeAddressSelector("ip6", "daddr") },
} as const;

const L4PROTO: Selector = { bytes: 1, load: (dreg) => ({ k: "meta", key: C.META_KEY.L4PROTO, dreg }) };
const TH_DPORT: Selector = {
  bytes: 2,
  load: (dreg) => ({ k: "payload", base: C.PAYLOAD_BASE.TRANSPORT, offset: 2, len: 2, dreg }),
};

/** nft's wire number of the register at 32-bit slot `slot` (128-bit numbers where aligned). */
function register(slot: number): number {
  return slot % 4 === 0 ? C.REG_1 + slot / 4 : C.REG32_00 + slot;
}

export class RuleCompiler {
  readonly #family: AddressFamily;
  readonly #t: Tokens;
  readonly #sink: AnonymousSetSink;
  readonly exprs: Expr[] = [];

  constructor(family: AddressFamily, text: string, sink: AnonymousSetSink) {
    this.#family = family;
    this.#t = new Tokens(text);
    this.#sink = sink;
  }

  compile(): Expr[] {
    while (!this.#t.done()) this.#item();
    return this.exprs;
  }

  #item(): void {
    const t = this.#t;
    const word = t.next();
    switch (word) {
      case "ct":
        this.#ct();
        return;
      case "mark":
        if (t.peek() === "set") this.#markSet();
        else this.#markTest();
        return;
      case "fib":
        this.#fib();
        return;
      case "meta":
        t.expect("l4proto");
        this.#afterSelector(L4PROTO);
        return;
      case "ip":
      case "ip6":
        this.#afterSelector(this.#addressSelector(word));
        return;
      case "iifname":
        this.#iifname();
        return;
      case "jump":
      case "goto":
        this.#verdict({
          code: word === "jump" ? C.VERDICT_CODE.JUMP : C.VERDICT_CODE.GOTO,
          chain: t.next(),
        });
        return;
      case "drop":
        this.#verdict({ code: C.VERDICT_CODE.DROP });
        return;
      case "reject":
        this.exprs.push({
          k: "reject",
          type: C.REJECT_ICMP_UNREACH,
          code: this.#family === "ip" ? C.ICMP_PORT_UNREACH : C.ICMPV6_PORT_UNREACH,
        });
        return;
      case "masquerade":
        t.expect("fully-random");
        this.exprs.push({ k: "masq", flags: C.NAT_RANGE_PROTO_RANDOM_FULLY });
        return;
      case "dnat":
        this.#dnat();
        return;
      case "numgen":
        this.#numgenVmap();
        return;
      case "update":
        this.#update();
        return;
      default:
        throw new UnsupportedSyntax(`statement ${word}`);
    }
  }

  #addressSelector(word: string): Selector {
    if (word !== this.#family) throw new UnsupportedSyntax(`${word} match in an ${this.#family} table`);
    const field = this.#t.next();
    if (field !== "saddr" && field !== "daddr") throw new UnsupportedSyntax(`${word} ${field}`);
    return ADDRESS_SELECTORS[this.#family][field];
  }

  #verdict(verdict: Verdict): void {
    this.exprs.push({ k: "verdict", verdict });
  }

  /** `ct state new` / `ct status dnat`: one bit of a host-order word. */
  #ct(): void {
    const key = this.#t.next();
    const value = this.#t.next();
    if (key === "state" && value === "new")
      this.#bitTest({ k: "ct", key: C.CT_KEY.STATE, dreg: 1 }, C.CT_STATE_NEW);
    else if (key === "status" && value === "dnat")
      this.#bitTest({ k: "ct", key: C.CT_KEY.STATUS, dreg: 1 }, C.CT_STATUS_DNAT);
    else throw new UnsupportedSyntax(`ct ${key} ${value}`);
  }

  #bitTest(load: Expr, bits: number): void {
    this.exprs.push(
      load,
      { k: "bitwise", sreg: 1, dreg: 1, mask: hostU32(bits), xor: hostU32(0) },
      { k: "cmp", sreg: 1, op: C.CMP_OP.NEQ, data: hostU32(0) },
    );
  }

  /** `mark and 0x4000 != 0`. */
  #markTest(): void {
    this.#t.expect("and");
    const bits = parseNumber(this.#t.next());
    this.#t.expect("!=", "0");
    this.#bitTest({ k: "meta", key: C.META_KEY.MARK, dreg: 1 }, bits);
  }

  /** `mark set mark or 0x4000` / `mark set mark xor 0x4000`. */
  #markSet(): void {
    this.#t.expect("set", "mark");
    const op = this.#t.next();
    const bits = parseNumber(this.#t.next());
    if (op !== "or" && op !== "xor") throw new UnsupportedSyntax(`mark set mark ${op}`);
    const mask = op === "or" ? ~bits >>> 0 : 0xffffffff;
    this.exprs.push(
      { k: "meta", key: C.META_KEY.MARK, dreg: 1 },
      { k: "bitwise", sreg: 1, dreg: 1, mask: hostU32(mask), xor: hostU32(bits) },
      { k: "metaSet", key: C.META_KEY.MARK, sreg: 1 },
    );
  }

  /** `fib saddr type local` / `fib daddr type local`. */
  #fib(): void {
    const which = this.#t.next();
    this.#t.expect("type", "local");
    if (which !== "saddr" && which !== "daddr") throw new UnsupportedSyntax(`fib ${which}`);
    const flags = which === "saddr" ? C.FIB_FLAG.SADDR : C.FIB_FLAG.DADDR;
    this.exprs.push(
      { k: "fib", flags, result: C.FIB_RESULT_ADDRTYPE, dreg: 1 },
      { k: "cmp", sreg: 1, op: C.CMP_OP.EQ, data: hostU32(C.RTN_LOCAL) },
    );
  }

  #iifname(): void {
    const negated = this.#t.peek() === "!=";
    if (negated) this.#t.next();
    const data = interfaceNameBytes(this.#t.next());
    this.exprs.push(
      { k: "meta", key: C.META_KEY.IIFNAME, dreg: 1 },
      { k: "cmp", sreg: 1, op: negated ? C.CMP_OP.NEQ : C.CMP_OP.EQ, data },
    );
  }

  /** After a selector: a concatenation, or a comparison, set lookup or anonymous set. */
  #afterSelector(first: Selector): void {
    if (this.#t.peek() === ".") {
      this.#concatenation(first);
      return;
    }
    const negated = this.#t.peek() === "!=";
    if (negated) this.#t.next();
    const value = this.#t.next();
    if (value.startsWith("@")) {
      this.exprs.push(first.load(1), { k: "lookup", set: value.slice(1), sreg: 1, invert: negated });
      return;
    }
    if (!first.address) {
      // only `meta l4proto tcp`
      if (negated) throw new UnsupportedSyntax("meta l4proto !=");
      this.exprs.push(first.load(1), {
        k: "cmp",
        sreg: 1,
        op: C.CMP_OP.EQ,
        data: Uint8Array.of(protocolNumber(value)),
      });
      return;
    }
    const { family, field } = first.address;
    if (value !== "{") {
      this.#compare(first, prefixOf(value, family), negated);
      return;
    }
    const items = this.#t.braced().map((g) => {
      if (g.length !== 1 || g[0] === undefined) throw new UnsupportedSyntax("set element");
      return prefixOf(g[0], family);
    });
    const [only] = items;
    if (items.length === 1 && only) {
      this.#compare(first, only, negated);
      return;
    }
    const set = this.#sink(addressSet(family, field, items));
    this.exprs.push(first.load(1), { k: "lookup", set: set.name, setId: set.id, sreg: 1, invert: negated });
  }

  /** An address or prefix comparison, loading only the prefix's bytes when it ends on a byte. */
  #compare(selector: Selector, p: Prefix, negated: boolean): void {
    const op = negated ? C.CMP_OP.NEQ : C.CMP_OP.EQ;
    const full = selector.bytes * 8;
    if (p.length === full || (p.length > 0 && p.length % 8 === 0)) {
      const bytes = p.length / 8;
      this.exprs.push(selector.load(1, bytes), { k: "cmp", sreg: 1, op, data: p.bytes.subarray(0, bytes) });
      return;
    }
    this.exprs.push(
      selector.load(1),
      {
        k: "bitwise",
        sreg: 1,
        dreg: 1,
        mask: prefixMask(selector.bytes, p.length),
        xor: new Uint8Array(selector.bytes),
      },
      { k: "cmp", sreg: 1, op, data: p.bytes },
    );
  }

  /** `a . b . c @set` or `a . b . c vmap @map`: each field in its own 32-bit slots from reg 1. */
  #concatenation(first: Selector): void {
    const fields = [first];
    while (this.#t.peek() === ".") {
      this.#t.next();
      fields.push(this.#selectorWord());
    }
    let slot = 0;
    for (const f of fields) {
      this.exprs.push(f.load(register(slot)));
      slot += Math.ceil(f.bytes / 4);
    }
    const next = this.#t.next();
    if (next === "vmap") {
      const target = this.#t.next();
      if (!target.startsWith("@")) throw new UnsupportedSyntax("anonymous vmap on a concatenation");
      this.exprs.push({ k: "lookup", set: target.slice(1), sreg: 1, dreg: C.REG_VERDICT });
    } else if (next.startsWith("@")) {
      this.exprs.push({ k: "lookup", set: next.slice(1), sreg: 1 });
    } else {
      throw new UnsupportedSyntax(`after a concatenation: ${next}`);
    }
  }

  #selectorWord(): Selector {
    const word = this.#t.next();
    if (word === "ip" || word === "ip6") return this.#addressSelector(word);
    if (word === "meta" && this.#t.next() === "l4proto") return L4PROTO;
    if (word === "th" && this.#t.next() === "dport") return TH_DPORT;
    throw new UnsupportedSyntax(`concatenation field ${word}`);
  }

  #natFamily(): number {
    return this.#family === "ip" ? C.AF_INET : C.AF_INET6;
  }

  /** `dnat to 10.0.0.1:80` / `dnat to [fd00::1]:80`, or the numgen map form. */
  #dnat(): void {
    const next = this.#t.next();
    if (next === "to") {
      const target = this.#t.next();
      const m = /^\[(.+)\]:(\d+)$/.exec(target) ?? /^([^:]+):(\d+)$/.exec(target);
      if (!m?.[1] || !m[2]) throw new UnsupportedSyntax(`dnat to ${target}`);
      this.exprs.push(
        { k: "immediate", dreg: 1, data: addressBytes(m[1], this.#family) },
        { k: "immediate", dreg: 2, data: portBytes(portNumber(m[2])) },
        { k: "nat", family: this.#natFamily(), addrReg: 1, protoReg: 2, flags: C.NAT_RANGE_PROTO_SPECIFIED },
      );
      return;
    }
    if (next !== this.#family) throw new UnsupportedSyntax(`dnat ${next}`);
    this.#t.expect("addr", ".", "port", "to", "numgen");
    const modulus = this.#numgen();
    this.#t.expect("map", "{");
    const targets = this.#numberedEntries(modulus).map((g) => {
      const [address, dot, port] = g;
      if (g.length !== 3 || dot !== "." || address === undefined || port === undefined)
        throw new UnsupportedSyntax("dnat map entry");
      return { address, port: portNumber(port) };
    });
    const set = this.#sink(dnatMap(this.#family, targets));
    this.exprs.push(
      { k: "lookup", set: set.name, setId: set.id, sreg: 1, dreg: 1 },
      {
        k: "nat",
        family: this.#natFamily(),
        addrReg: 1,
        protoReg: register(Math.ceil((this.#family === "ip" ? 4 : 16) / 4)),
        flags: 0,
      },
    );
  }

  /** `random mod N` after `numgen`, loaded into reg 1; returns N. */
  #numgen(): number {
    this.#t.expect("random", "mod");
    const modulus = parseNumber(this.#t.next());
    if (modulus < 1) throw new UnsupportedSyntax("numgen mod 0");
    this.exprs.push({ k: "numgen", dreg: 1, modulus });
    return modulus;
  }

  /** `i : value` entries for i = 0..count-1, in that order; the value's tokens of each. */
  #numberedEntries(count: number): string[][] {
    const entries = this.#t.braced().map((g, i) => {
      if (g[0] !== String(i) || g[1] !== ":") throw new UnsupportedSyntax("map key");
      return g.slice(2);
    });
    if (entries.length !== count) throw new UnsupportedSyntax("map size differs from the modulus");
    return entries;
  }

  /** `numgen random mod N vmap { 0 : goto a , 1 : goto b }`. */
  #numgenVmap(): void {
    const modulus = this.#numgen();
    this.#t.expect("vmap", "{");
    const verdicts = this.#numberedEntries(modulus).map((g) => {
      const [kind, chain] = g;
      if (g.length !== 2 || (kind !== "goto" && kind !== "jump") || chain === undefined)
        throw new UnsupportedSyntax("vmap entry");
      return { code: kind === "goto" ? C.VERDICT_CODE.GOTO : C.VERDICT_CODE.JUMP, chain };
    });
    const set = this.#sink(verdictMap(verdicts));
    this.exprs.push({ k: "lookup", set: set.name, setId: set.id, sreg: 1, dreg: C.REG_VERDICT });
  }

  /** `update @set { ip saddr }`. */
  #update(): void {
    const target = this.#t.next();
    if (!target.startsWith("@")) throw new UnsupportedSyntax(`update ${target}`);
    this.#t.expect("{");
    const selector = this.#addressSelector(this.#t.next());
    this.#t.expect("}");
    this.exprs.push(selector.load(1), {
      k: "dynset",
      set: target.slice(1),
      op: C.DYNSET_OP_UPDATE,
      sreg: 1,
    });
  }
}

/** The expressions of one rule; anonymous sets go to `sink` as they are met. */
export function compileRule(family: AddressFamily, text: string, sink: AnonymousSetSink): Expr[] {
  return new RuleCompiler(family, text, sink).compile();
}
