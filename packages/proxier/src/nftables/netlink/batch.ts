// A Transaction as one nfnetlink batch: the statements of `Transaction.statements()` (what `nft -f`
// would be given) encoded as the netlink messages nft 1.0.6 sends for them. Anonymous sets get
// concrete names from the caller. Anything the encoder does not know throws UnsupportedSyntax.

import {
  type ElementObject,
  type NFTObject,
  type Operation,
  renderOperation,
  type Verb,
} from "../objects.js";
import type { Statement, Transaction } from "../transaction.js";
import type { AnonymousElements, AnonymousSet } from "./anonymous-sets.js";
import { commentUdata } from "./anonymous-sets.js";
import * as C from "./constants.js";
import { writeExpressions, writeValue, writeVerdict } from "./exprs.js";
import { compileRule } from "./rule-compiler.js";
import { parseVerdict, type SetLayout, setLayout, setUserdata, timeoutMs, writeKey } from "./set-types.js";
import { type AddressFamily, addressLength, UnsupportedSyntax, writeAddress, writePort } from "./values.js";
import { cString, familyNumber, NetlinkWriter } from "./writer.js";

export interface EncodedBatch {
  /** BATCH_BEGIN, the messages, BATCH_END. */
  readonly buffer: Buffer;
  /** The sequence numbers the batch uses (BATCH_BEGIN's to BATCH_END's). */
  readonly firstSeq: number;
  readonly lastSeq: number;
  /** The `nft -f` line a message (by sequence number) came from, for error messages. */
  describe(seq: number): string;
}

/** Hands out anonymous set names no set in the table has. */
export interface AnonymousSetNamer {
  next(kind: "set" | "map"): string;
}

/** Element lists are split so one nest stays under nla_len's 64 KiB. */
const ELEMENTS_NEST_LIMIT = 60_000;

class BatchEncoder {
  readonly #w = new NetlinkWriter(1 << 20);
  readonly #family: AddressFamily;
  readonly #nfproto: number;
  readonly #table: string;
  readonly #tableName: Uint8Array;
  readonly #namer: AnonymousSetNamer;
  readonly #layouts = new Map<string, SetLayout>();
  readonly #firstSeq: number;
  /** Statement of each sequence number from firstSeq + 1 on. */
  readonly #origins: Statement[] = [];
  #seq: number;
  #setId = 0;
  #current: Statement | undefined;

  constructor(tx: Transaction, namer: AnonymousSetNamer, firstSeq: number) {
    this.#firstSeq = firstSeq >>> 0;
    this.#seq = this.#firstSeq;
    if (tx.family === "inet") throw new UnsupportedSyntax("inet tables");
    this.#family = tx.family;
    this.#nfproto = familyNumber(tx.family);
    this.#table = tx.table;
    this.#tableName = cString(tx.table);
    this.#namer = namer;
  }

  encode(tx: Transaction): EncodedBatch {
    this.#w.batchBegin(this.#seq);
    for (const st of tx.statements()) {
      this.#current = st;
      if (st.kind === "elements") this.#elements("add", st.container, st.elements);
      else this.#operation(st.op);
    }
    this.#w.batchEnd(++this.#seq);
    const origins = this.#origins;
    const family = tx.family;
    const table = tx.table;
    const firstSeq = this.#firstSeq;
    return {
      buffer: this.#w.finish(),
      firstSeq,
      lastSeq: this.#seq,
      describe(seq: number) {
        const st = origins[seq - firstSeq - 1];
        if (!st) return "the batch";
        if (st.kind === "operation") return renderOperation(st.op, family, table);
        return `add element ${family} ${table} ${st.container} { ... ${st.elements.length} elements }`;
      },
    };
  }

  #begin(msg: number, flags: number): void {
    this.#origins.push(this.#current as Statement);
    this.#w.begin((C.NFNL_SUBSYS_NFTABLES << 8) | msg, flags, ++this.#seq, this.#nfproto);
  }

  #operation(op: Operation): void {
    const o = op.object;
    switch (o.kind) {
      case "table":
        this.#tableOp(op.verb, o.comment);
        return;
      case "chain":
        this.#chainOp(op.verb, o);
        return;
      case "rule":
        this.#ruleOp(op.verb, o.chain, o.rule, o.comment);
        return;
      case "set":
      case "map":
        this.#setOp(op.verb, o);
        return;
      case "element":
        this.#elements(op.verb, o.set ?? o.map ?? "", [o]);
        return;
      case "counter":
        this.#counterOp(op.verb, o.name);
        return;
    }
  }

  #createFlags(verb: Verb): number {
    if (verb === "add") return C.NLM_F_CREATE;
    if (verb === "create") return C.NLM_F_CREATE | C.NLM_F_EXCL;
    throw new UnsupportedSyntax(`${verb}`);
  }

  #tableOp(verb: Verb, comment: string | undefined): void {
    const w = this.#w;
    if (verb === "delete") {
      this.#begin(C.MSG.DELTABLE, 0);
      w.str(C.TABLE.NAME, this.#table);
    } else {
      this.#begin(C.MSG.NEWTABLE, this.#createFlags(verb));
      w.str(C.TABLE.NAME, this.#table);
      w.u32(C.TABLE.FLAGS, 0);
      if (comment !== undefined) w.bytes(C.TABLE.USERDATA, commentUdata(C.UDATA.COMMENT, comment));
    }
    w.end();
  }

  #chainOp(verb: Verb, o: Extract<NFTObject, { kind: "chain" }>): void {
    const w = this.#w;
    if (verb === "flush") {
      this.#begin(C.MSG.DELRULE, 0);
      w.cstr(C.RULE.TABLE, this.#tableName);
      w.str(C.RULE.CHAIN, o.name);
    } else if (verb === "delete") {
      this.#begin(C.MSG.DELCHAIN, 0);
      w.cstr(C.CHAIN.TABLE, this.#tableName);
      w.str(C.CHAIN.NAME, o.name);
    } else {
      this.#begin(C.MSG.NEWCHAIN, this.#createFlags(verb));
      w.cstr(C.CHAIN.TABLE, this.#tableName);
      w.str(C.CHAIN.NAME, o.name);
      if (o.type !== undefined && o.hook !== undefined && o.priority !== undefined) {
        w.nest(C.CHAIN.HOOK);
        w.u32(C.HOOK.HOOKNUM, C.HOOKNUM[o.hook]);
        w.u32(C.HOOK.PRIORITY, o.priority);
        w.endNest();
        w.str(C.CHAIN.TYPE, o.type);
      }
      if (o.comment !== undefined) w.bytes(C.CHAIN.USERDATA, commentUdata(C.UDATA.COMMENT, o.comment));
    }
    w.end();
  }

  #ruleOp(verb: Verb, chain: string, text: string, comment: string | undefined): void {
    if (verb !== "add" && verb !== "insert") throw new UnsupportedSyntax(`${verb} rule`);
    // Anonymous sets are written while compiling, before the rule that uses them.
    const exprs = compileRule(this.#family, text, (set) => this.#anonymousSet(set));
    const w = this.#w;
    this.#begin(C.MSG.NEWRULE, verb === "add" ? C.NLM_F_CREATE | C.NLM_F_APPEND : C.NLM_F_CREATE);
    w.cstr(C.RULE.TABLE, this.#tableName);
    w.str(C.RULE.CHAIN, chain);
    writeExpressions(w, exprs);
    if (comment !== undefined) w.bytes(C.RULE.USERDATA, commentUdata(C.UDATA.COMMENT, comment));
    w.end();
  }

  #anonymousSet(set: AnonymousSet): { name: string; id: number } {
    const name = this.#namer.next(set.map ? "map" : "set");
    const id = ++this.#setId;
    const w = this.#w;
    this.#begin(C.MSG.NEWSET, C.NLM_F_CREATE | C.NLM_F_EXCL);
    w.cstr(C.SET.TABLE, this.#tableName);
    w.str(C.SET.NAME, name);
    w.u32(C.SET.FLAGS, set.flags);
    w.u32(C.SET.KEY_TYPE, set.keyType);
    w.u32(C.SET.KEY_LEN, set.keyLen);
    if (set.map) {
      w.u32(C.SET.DATA_TYPE, set.dataType ?? 0);
      w.u32(C.SET.DATA_LEN, set.dataLen ?? 0);
    }
    w.u32(C.SET.ID, id);
    w.nest(C.SET.DESC);
    w.u32(C.SET_DESC.SIZE, set.size);
    w.endNest();
    w.bytes(C.SET.USERDATA, set.userdata);
    w.end();
    this.#anonymousElements(id, set.elements);
    return { name, id };
  }

  /**
   * Elements of the set this batch just declared, named by its batch id only: given a name, the
   * kernel would first compare it with every set's name in the table (nft_set_lookup_global), one
   * more scan per anonymous set; with no name it goes straight to the set the batch added last.
   */
  #anonymousElements(setId: number, elements: AnonymousElements): void {
    const target = { setId };
    const w = this.#w;
    const flags = C.NLM_F_CREATE;
    switch (elements.kind) {
      case "listed":
        this.#elementMessages(C.MSG.NEWSETELEM, flags, target, elements.elements, (e) => {
          w.nest(C.LIST_ELEM);
          writeValue(w, C.ELEM.KEY, e.key);
          if (e.intervalEnd) w.u32(C.ELEM.FLAGS, C.ELEM_INTERVAL_END);
          if (e.userdata) w.bytes(C.ELEM.USERDATA, e.userdata);
          w.endNest();
        });
        return;
      case "dnat": {
        const family = elements.family;
        const addrLen = addressLength(family);
        let i = 0;
        this.#elementMessages(C.MSG.NEWSETELEM, flags, target, elements.targets, (t) => {
          w.nest(C.LIST_ELEM);
          const key = w.valueAt(C.ELEM.KEY, 4);
          w.buffer.writeUInt32LE(i++, key);
          const at = w.valueAt(C.ELEM.DATA, addrLen + 4);
          writeAddress(w.buffer, at, t.address, family);
          writePort(w.buffer, at + addrLen, t.port);
          w.endNest();
        });
        return;
      }
      case "verdicts": {
        let i = 0;
        this.#elementMessages(C.MSG.NEWSETELEM, flags, target, elements.verdicts, (v) => {
          w.nest(C.LIST_ELEM);
          const key = w.valueAt(C.ELEM.KEY, 4);
          w.buffer.writeUInt32LE(i++, key);
          writeVerdict(w, C.ELEM.DATA, v);
          w.endNest();
        });
        return;
      }
    }
  }

  #setOp(verb: Verb, o: Extract<NFTObject, { kind: "set" | "map" }>): void {
    const w = this.#w;
    if (verb === "flush") {
      this.#begin(C.MSG.DELSETELEM, 0);
      w.cstr(C.ELEM_LIST.TABLE, this.#tableName);
      w.str(C.ELEM_LIST.SET, o.name);
    } else if (verb === "delete") {
      this.#begin(C.MSG.DELSET, 0);
      w.cstr(C.SET.TABLE, this.#tableName);
      w.str(C.SET.NAME, o.name);
    } else {
      if (o.type === undefined) throw new UnsupportedSyntax(`${o.kind} without a type`);
      const layout = setLayout(this.#family, o.type);
      if (layout.map !== (o.kind === "map")) throw new UnsupportedSyntax(`${o.kind} of type ${o.type}`);
      this.#layouts.set(o.name, layout);
      const set = o.kind === "set" ? o : undefined;
      let flags = layout.map ? C.SET_FLAG.MAP : 0;
      for (const f of set?.flags ?? []) {
        if (f === "dynamic") flags |= C.SET_FLAG.EVAL;
        else if (f === "timeout") flags |= C.SET_FLAG.TIMEOUT;
        else throw new UnsupportedSyntax(`set flag ${f}`);
      }
      this.#begin(C.MSG.NEWSET, this.#createFlags(verb));
      w.cstr(C.SET.TABLE, this.#tableName);
      w.str(C.SET.NAME, o.name);
      w.u32(C.SET.FLAGS, flags);
      w.u32(C.SET.KEY_TYPE, layout.keyType);
      w.u32(C.SET.KEY_LEN, layout.keyLen);
      if (layout.map) {
        w.u32(C.SET.DATA_TYPE, C.NFT_DATA_VERDICT);
        w.u32(C.SET.DATA_LEN, 16);
      }
      if (set?.timeout !== undefined) w.u64(C.SET.TIMEOUT, timeoutMs(set.timeout));
      w.u32(C.SET.ID, ++this.#setId);
      w.bytes(C.SET.USERDATA, setUserdata(layout, o.comment));
    }
    w.end();
  }

  /** The layout of a named set: declared in this batch, or by the renderer's fixed declarations. */
  #layoutOf(container: string, element: ElementObject): SetLayout {
    const known = this.#layouts.get(container);
    if (known) return known;
    const declared = this.#declared?.(container);
    if (!declared)
      throw new UnsupportedSyntax(`elements of ${container}, whose type this batch does not declare`);
    const layout = setLayout(this.#family, declared);
    if (layout.map !== (element.map !== undefined)) throw new UnsupportedSyntax(`elements of ${container}`);
    this.#layouts.set(container, layout);
    return layout;
  }

  #declared: ((name: string) => string | undefined) | undefined;

  /** Types of sets declared in earlier batches, for a partial sync that only adds elements. */
  withDeclaredTypes(types: ((name: string) => string | undefined) | undefined): this {
    this.#declared = types;
    return this;
  }

  #elements(verb: Verb, container: string, elements: readonly ElementObject[]): void {
    const [first] = elements;
    if (!first) return;
    if (verb !== "add" && verb !== "create" && verb !== "delete")
      throw new UnsupportedSyntax(`${verb} element`);
    const layout = this.#layoutOf(container, first);
    const w = this.#w;
    const msg = verb === "delete" ? C.MSG.DELSETELEM : C.MSG.NEWSETELEM;
    const flags = verb === "delete" ? 0 : this.#createFlags(verb);
    this.#elementMessages(msg, flags, container, elements, (e) => {
      w.nest(C.LIST_ELEM);
      writeKey(w, C.ELEM.KEY, layout, e.key);
      if (verb !== "delete" && layout.map) writeVerdict(w, C.ELEM.DATA, parseVerdict(e.value ?? []));
      if (verb !== "delete" && e.comment !== undefined)
        w.bytes(C.ELEM.USERDATA, commentUdata(C.UDATA.COMMENT, e.comment));
      w.endNest();
    });
  }

  /** One or more messages listing `elements`, each list kept under the nest limit. */
  #elementMessages<E>(
    msg: number,
    flags: number,
    set: string | { readonly setId: number },
    elements: readonly E[],
    write: (e: E) => void,
  ): void {
    const w = this.#w;
    let open = false;
    for (const e of elements) {
      if (open && w.nestLength() > ELEMENTS_NEST_LIMIT) {
        w.endNest();
        w.end();
        open = false;
      }
      if (!open) {
        this.#begin(msg, flags);
        w.cstr(C.ELEM_LIST.TABLE, this.#tableName);
        if (typeof set === "string") w.str(C.ELEM_LIST.SET, set);
        else w.u32(C.ELEM_LIST.SET_ID, set.setId);
        w.nest(C.ELEM_LIST.ELEMENTS);
        open = true;
      }
      write(e);
    }
    if (open) {
      w.endNest();
      w.end();
    }
  }

  #counterOp(verb: Verb, name: string): void {
    const w = this.#w;
    if (verb === "delete") {
      this.#begin(C.MSG.DELOBJ, 0);
      w.str(C.OBJ.TABLE, this.#table);
      w.str(C.OBJ.NAME, name);
      w.u32(C.OBJ.TYPE, C.OBJECT_COUNTER);
    } else {
      this.#begin(C.MSG.NEWOBJ, this.#createFlags(verb));
      w.str(C.OBJ.TABLE, this.#table);
      w.str(C.OBJ.NAME, name);
      w.u32(C.OBJ.TYPE, C.OBJECT_COUNTER);
      w.nest(C.OBJ.DATA);
      w.u64(C.COUNTER.BYTES, 0);
      w.u64(C.COUNTER.PACKETS, 0);
      w.endNest();
    }
    w.end();
  }
}

/**
 * Encodes a transaction. `declaredTypes` gives the `type` of named sets the batch only adds
 * elements to (declared by an earlier sync); without it such a batch is unsupported. Messages are
 * numbered from `firstSeq` on, so that answers to an earlier batch are never taken for this one's.
 */
export function encodeTransaction(
  tx: Transaction,
  namer: AnonymousSetNamer,
  declaredTypes?: (name: string) => string | undefined,
  firstSeq = 1,
): EncodedBatch {
  if (tx.error) throw tx.error;
  return new BatchEncoder(tx, namer, firstSeq).withDeclaredTypes(declaredTypes).encode(tx);
}
