// An in-memory nftables table for tests: applies a transaction to a copy and commits only if
// every operation succeeds, and refuses the references the kernel would refuse. It throws the
// NFTError NftApplier throws, so isNotFound/isAlreadyExists classify both the same way.
import type { NFTRunner } from "../apply/nft-applier.js";
import { NFTError, type NFTErrorKind } from "./errors.js";
import type {
  ChainObject,
  CounterObject,
  ElementObject,
  MapObject,
  NFTFamily,
  NFTObject,
  Operation,
  SetObject,
} from "./objects.js";
import { renderOperation } from "./objects.js";
import type { Transaction } from "./transaction.js";

export interface FakeRule {
  readonly rule: string;
  readonly comment?: string;
}
export interface FakeChain {
  readonly def: ChainObject;
  rules: FakeRule[];
}
export interface FakeElement {
  readonly key: readonly string[];
  readonly value?: readonly string[];
  readonly comment?: string;
}
export interface FakeContainer {
  readonly def: SetObject | MapObject;
  elements: Map<string, FakeElement>;
}
export interface FakeTable {
  comment?: string;
  chains: Map<string, FakeChain>;
  sets: Map<string, FakeContainer>;
  maps: Map<string, FakeContainer>;
  counters: Map<string, CounterObject>;
}

/** Chains named by jump/goto anywhere in a rule or verdict, and @set/@map references. */
export function referencesOf(text: string): { chains: string[]; containers: string[] } {
  const chains = [...text.matchAll(/\b(?:jump|goto) ([A-Za-z0-9_./-]+)/g)].map((m) => m[1] ?? "");
  const containers = [...text.matchAll(/@([A-Za-z0-9_./-]+)/g)].map((m) => m[1] ?? "");
  return { chains, containers };
}

function cloneTable(t: FakeTable): FakeTable {
  const chains = new Map([...t.chains].map(([k, c]) => [k, { def: c.def, rules: [...c.rules] }]));
  const copy = (m: Map<string, FakeContainer>) =>
    new Map([...m].map(([k, c]) => [k, { def: c.def, elements: new Map(c.elements) }]));
  return {
    comment: t.comment,
    chains,
    sets: copy(t.sets),
    maps: copy(t.maps),
    counters: new Map(t.counters),
  };
}

export class FakeNFTables implements NFTRunner {
  readonly family: NFTFamily;
  readonly table: string;
  #state: FakeTable | null = null;
  lastTransaction: Transaction | null = null;

  constructor(family: NFTFamily, table: string) {
    this.family = family;
    this.table = table;
  }

  get state(): FakeTable | null {
    return this.#state;
  }

  /** Applies `tx` atomically; throws the first error (a builder error or an apply error). */
  run(tx: Transaction): void {
    this.lastTransaction = tx;
    this.#state = this.#apply(tx);
  }

  /** Like run, but commits nothing (nft --check). */
  check(tx: Transaction): void {
    this.#apply(tx);
  }

  #apply(tx: Transaction): FakeTable | null {
    if (tx.error) throw tx.error;
    if (tx.family !== this.family || tx.table !== this.table) {
      throw new NFTError(
        "invalid",
        `transaction for ${tx.family} ${tx.table}, fake is ${this.family} ${this.table}`,
      );
    }
    let t = this.#state ? cloneTable(this.#state) : null;
    for (const op of tx.operations) t = this.#applyOne(t, op);
    return t;
  }

  #applyOne(t: FakeTable | null, op: Operation): FakeTable | null {
    const o = op.object;
    const line = renderOperation(op, this.family, this.table);
    const fail = (kind: NFTErrorKind, why: string): never => {
      throw new NFTError(kind, `${why}: ${line}`);
    };
    if (o.kind === "table") {
      if (op.verb === "add")
        return (
          t ?? {
            comment: o.comment,
            chains: new Map(),
            sets: new Map(),
            maps: new Map(),
            counters: new Map(),
          }
        );
      if (op.verb === "create")
        return t ? fail("exists", "table exists") : this.#applyOne(null, { ...op, verb: "add" });
      if (op.verb === "flush") {
        if (!t) fail("not-found", "no such table");
        for (const c of t?.chains.values() ?? []) c.rules = [];
        return t;
      }
      if (op.verb === "delete" && !t) fail("not-found", "no such table");
      return null;
    }
    if (!t) return fail("not-found", "no such table");
    switch (o.kind) {
      case "chain":
        this.#chainOp(t, op.verb, o, fail);
        break;
      case "rule":
        this.#ruleOp(t, op.verb, o, fail);
        break;
      case "set":
      case "map":
        this.#containerOp(t, op.verb, o, fail);
        break;
      case "element":
        this.#elementOp(t, op.verb, o, fail);
        break;
      case "counter":
        this.#counterOp(t, op.verb, o, fail);
        break;
    }
    return t;
  }

  #isReferenced(t: FakeTable, name: string, kind: "chain" | "container"): boolean {
    const hit = (text: string) => {
      const refs = referencesOf(text);
      return (kind === "chain" ? refs.chains : refs.containers).includes(name);
    };
    for (const c of t.chains.values()) if (c.rules.some((r) => hit(r.rule))) return true;
    for (const m of t.maps.values())
      for (const e of m.elements.values()) if (hit((e.value ?? []).join(" "))) return true;
    return false;
  }

  #chainOp(t: FakeTable, verb: string, o: ChainObject, fail: (k: NFTErrorKind, w: string) => never): void {
    const existing = t.chains.get(o.name);
    switch (verb) {
      case "add":
      case "create":
        if (existing) {
          if (verb === "create") fail("exists", "chain exists");
          const changed =
            o.type !== undefined &&
            (existing.def.type !== o.type ||
              existing.def.hook !== o.hook ||
              existing.def.priority !== o.priority);
          if (changed) fail("busy", "cannot change a base chain's type, hook or priority");
          return;
        }
        t.chains.set(o.name, { def: o, rules: [] });
        return;
      case "flush":
        if (!existing) fail("not-found", "no such chain");
        if (existing) existing.rules = [];
        return;
      case "delete":
      case "destroy":
        if (!existing) {
          if (verb === "delete") fail("not-found", "no such chain");
          return;
        }
        // The kernel drops a chain's own rules with it; only references to it block a delete.
        if (this.#isReferenced(t, o.name, "chain")) fail("busy", "chain is still referenced");
        t.chains.delete(o.name);
        return;
    }
  }

  #checkRefs(t: FakeTable, text: string, fail: (k: NFTErrorKind, w: string) => never): void {
    const refs = referencesOf(text);
    for (const c of refs.chains) if (!t.chains.has(c)) fail("not-found", `no such chain ${c}`);
    for (const s of refs.containers)
      if (!t.sets.has(s) && !t.maps.has(s)) fail("not-found", `no such set or map ${s}`);
  }

  #ruleOp(
    t: FakeTable,
    verb: string,
    o: { chain: string; rule: string; comment?: string },
    fail: (k: NFTErrorKind, w: string) => never,
  ): void {
    const chain = t.chains.get(o.chain);
    if (!chain) {
      fail("not-found", "no such chain");
      return;
    }
    this.#checkRefs(t, o.rule, fail);
    const r: FakeRule = { rule: o.rule, comment: o.comment };
    if (verb === "insert") chain.rules.unshift(r);
    else chain.rules.push(r);
  }

  #containerOp(
    t: FakeTable,
    verb: string,
    o: SetObject | MapObject,
    fail: (k: NFTErrorKind, w: string) => never,
  ): void {
    const store = o.kind === "set" ? t.sets : t.maps;
    const existing = store.get(o.name);
    switch (verb) {
      case "add":
      case "create":
        if (existing) {
          if (verb === "create") fail("exists", `${o.kind} exists`);
          if (existing.def.type !== o.type) fail("busy", `cannot change a ${o.kind}'s type`);
          return;
        }
        store.set(o.name, { def: o, elements: new Map() });
        return;
      case "flush":
        if (!existing) fail("not-found", `no such ${o.kind}`);
        existing?.elements.clear();
        return;
      default:
        if (!existing) {
          if (verb === "delete") fail("not-found", `no such ${o.kind}`);
          return;
        }
        if (this.#isReferenced(t, o.name, "container")) fail("busy", `${o.kind} is still referenced`);
        store.delete(o.name);
    }
  }

  #counterOp(
    t: FakeTable,
    verb: string,
    o: CounterObject,
    fail: (k: NFTErrorKind, w: string) => never,
  ): void {
    const existing = t.counters.has(o.name);
    if (verb === "add" || verb === "create") {
      if (existing && verb === "create") fail("exists", "counter exists");
      if (!existing) t.counters.set(o.name, o);
      return;
    }
    if (!existing && verb === "delete") fail("not-found", "no such counter");
    t.counters.delete(o.name);
  }

  #elementOp(
    t: FakeTable,
    verb: string,
    o: ElementObject,
    fail: (k: NFTErrorKind, w: string) => never,
  ): void {
    const container = o.set !== undefined ? t.sets.get(o.set) : t.maps.get(o.map ?? "");
    if (!container) {
      fail("not-found", "no such set or map");
      return;
    }
    const key = o.key.join(" . ");
    const existing = container.elements.get(key);
    if (verb === "delete" || verb === "destroy") {
      if (!existing && verb === "delete") fail("not-found", "no such element");
      container.elements.delete(key);
      return;
    }
    if (o.value) this.#checkRefs(t, o.value.join(" "), fail);
    if (existing) {
      if (verb === "create") fail("exists", "element exists");
      // The kernel refuses to silently change a map element's value.
      if ((existing.value ?? []).join(" . ") !== (o.value ?? []).join(" . "))
        fail("exists", "element exists with another value");
      return;
    }
    container.elements.set(key, { key: o.key, value: o.value, comment: o.comment });
  }

  /** The table as a canonical `nft -f` script: objects sorted by kind then name, rule order kept. */
  dump(): string {
    const t = this.#state;
    if (!t) return "";
    const ops: NFTObject[] = [{ kind: "table", comment: t.comment }];
    const byName = <V>(m: Map<string, V>) => [...m].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    for (const [, c] of byName(t.chains)) ops.push(c.def);
    for (const [, s] of byName(t.sets)) ops.push(s.def);
    for (const [, m] of byName(t.maps)) ops.push(m.def);
    for (const [, c] of byName(t.counters)) ops.push(c);
    for (const [name, c] of byName(t.chains))
      for (const r of c.rules) ops.push({ kind: "rule", chain: name, ...r });
    for (const [name, s] of byName(t.sets))
      for (const [, e] of byName(s.elements)) ops.push({ kind: "element", set: name, ...e });
    for (const [name, m] of byName(t.maps))
      for (const [, e] of byName(m.elements)) ops.push({ kind: "element", map: name, ...e });
    return `${ops.map((object) => renderOperation({ verb: "add", object }, this.family, this.table)).join("\n")}\n`;
  }
}
