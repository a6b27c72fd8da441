// A batch of nftables operations for one table, applied atomically. Builder calls never
// throw or return errors: the first invalid call is remembered, later calls are ignored,
// and whoever runs the transaction gets that error. Call sites stay free of checks.

import { NAME_LENGTH_MAX } from "./names.js";
import {
  type ElementObject,
  elementBody,
  type NFTFamily,
  type NFTObject,
  type Operation,
  renderOperation,
  type Verb,
} from "./objects.js";

/** One statement of `statements()`: an operation, or the element adds of one set gathered. */
export type Statement =
  | { readonly kind: "operation"; readonly op: Operation }
  | { readonly kind: "elements"; readonly container: string; readonly elements: readonly ElementObject[] };

const NAME_PATTERN = /^[A-Za-z_.][A-Za-z0-9_./-]*$/;

function validate(verb: Verb, o: NFTObject): string | null {
  const nameOf =
    o.kind === "rule" ? o.chain : o.kind === "element" ? (o.set ?? o.map) : "name" in o ? o.name : "";
  if (o.kind !== "table") {
    if (!nameOf) return `${o.kind} has no ${o.kind === "rule" ? "chain" : "name"}`;
    if (nameOf.length > NAME_LENGTH_MAX) return `name ${nameOf} is longer than ${NAME_LENGTH_MAX}`;
    if (!NAME_PATTERN.test(nameOf)) return `name ${JSON.stringify(nameOf)} has characters nft does not allow`;
  }
  if (verb === "insert" && o.kind !== "rule") return "only rules can be inserted";
  switch (o.kind) {
    case "chain": {
      const set = [o.type, o.hook, o.priority].filter((x) => x !== undefined).length;
      if (set !== 0 && set !== 3) return `chain ${o.name}: type, hook and priority go together`;
      return null;
    }
    case "rule":
      if (verb === "delete" || verb === "destroy")
        return "rules can only be deleted by handle, which we never use";
      if (verb === "flush" || verb === "create") return `cannot ${verb} a rule`;
      return o.rule.trim() === "" ? `empty rule in ${o.chain}` : null;
    case "set":
    case "map":
      if ((verb === "add" || verb === "create") && !o.type) return `${o.kind} ${o.name} needs a type`;
      return null;
    case "element":
      if ((o.set === undefined) === (o.map === undefined)) return "element needs exactly one of set and map";
      if (o.key.length === 0) return "element has no key";
      if (verb === "flush") return "cannot flush an element";
      if (o.map !== undefined && (verb === "add" || verb === "create") && !o.value?.length) {
        return `map element ${o.key.join(" . ")} needs a value`;
      }
      return null;
    case "counter":
      return verb === "flush" ? "cannot flush a counter" : null;
    case "table":
      return null;
  }
}

export class Transaction {
  readonly family: NFTFamily;
  readonly table: string;
  readonly #ops: Operation[] = [];
  #err: Error | null = null;

  constructor(family: NFTFamily, table: string) {
    this.family = family;
    this.table = table;
  }

  #push(verb: Verb, object: NFTObject): void {
    if (this.#err) return;
    const problem = validate(verb, object);
    if (problem) {
      this.#err = new Error(`nftables: ${verb} ${object.kind}: ${problem}`);
      return;
    }
    this.#ops.push({ verb, object });
  }

  /** Create if absent (a rule is appended). */
  add(o: NFTObject): void {
    this.#push("add", o);
  }
  /** Create; fails if it exists. */
  create(o: NFTObject): void {
    this.#push("create", o);
  }
  /** Prepend a rule. */
  insert(o: NFTObject): void {
    this.#push("insert", o);
  }
  /** Remove a chain's rules or a set's/map's elements. */
  flush(o: NFTObject): void {
    this.#push("flush", o);
  }
  /** Delete; fails if absent. */
  delete(o: NFTObject): void {
    this.#push("delete", o);
  }
  /** Delete if present. */
  destroy(o: NFTObject): void {
    this.#push("destroy", o);
  }

  get operations(): readonly Operation[] {
    return this.#ops;
  }

  get error(): Error | null {
    return this.#err;
  }

  get size(): number {
    return this.#ops.length;
  }

  /**
   * The operations as the kernel gets them: element adds gathered into one statement per set or
   * map. One statement per element (as toString() and upstream write them) is one netlink message
   * each, and the kernel seems to revalidate the table for every message that adds a goto verdict: at
   * 10k Services the one-per-line form cost a third more kernel time (measured). A group comes before
   * anything else touches its set, and all groups before a chain or table is deleted, so the outcome,
   * and any failure, stay those of the one-per-line form.
   */
  statements(): Statement[] {
    const out: Statement[] = [];
    const pending = new Map<string, ElementObject[]>();
    const emit = (container: string) => {
      const elements = pending.get(container);
      if (!elements) return;
      out.push({ kind: "elements", container, elements });
      pending.delete(container);
    };
    for (const op of this.#ops) {
      const o = op.object;
      if (o.kind === "element") {
        const container = o.set ?? o.map ?? "";
        if (op.verb === "add") {
          const group = pending.get(container);
          if (group) group.push(o);
          else pending.set(container, [o]);
          continue;
        }
        emit(container);
      } else if (o.kind === "set" || o.kind === "map") {
        emit(o.name);
      } else if (
        (o.kind === "chain" || o.kind === "table") &&
        (op.verb === "delete" || op.verb === "destroy")
      ) {
        for (const container of [...pending.keys()]) emit(container);
      }
      out.push({ kind: "operation", op });
    }
    for (const container of [...pending.keys()]) emit(container);
    return out;
  }

  /** The `nft -f` script the kernel gets: `statements()`, one line each. */
  script(): string {
    const where = `${this.family} ${this.table}`;
    const lines = this.statements().map((st) =>
      st.kind === "operation"
        ? renderOperation(st.op, this.family, this.table)
        : `add element ${where} ${st.container} { ${st.elements.map((e) => elementBody(e)).join(", ")} }`,
    );
    if (this.#err) lines.push(`# ERROR: ${this.#err.message}`);
    return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
  }

  /** The `nft -f` script, one operation per line; a stored error is appended as a trailing comment. */
  toString(): string {
    const lines = this.#ops.map((op) => renderOperation(op, this.family, this.table));
    if (this.#err) lines.push(`# ERROR: ${this.#err.message}`);
    return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
  }
}
