// Contents of the six shared sets/maps, diffed against the previous sync so that a partial
// sync only touches the elements that changed.
import type { ElementObject } from "./objects.js";
import type { Transaction } from "./transaction.js";

export type ElementContents = ReadonlyMap<string, string>;

const SEP = " . ";

export class ElementStore {
  readonly #kind: "set" | "map";
  readonly #name: string;
  readonly #previous: ElementContents;
  readonly #current = new Map<string, string>();

  /** `previous` is what the table holds now; pass an empty map after a flush. */
  constructor(kind: "set" | "map", name: string, previous: ElementContents) {
    this.#kind = kind;
    this.#name = name;
    this.#previous = previous;
  }

  #element(key: readonly string[], value?: readonly string[], comment?: string): ElementObject {
    return this.#kind === "set"
      ? { kind: "element", set: this.#name, key, comment }
      : { kind: "element", map: this.#name, key, value, comment };
  }

  /** Adds the element unless it is already there with the same value; a changed value is replaced. */
  ensure(tx: Transaction, key: readonly string[], value?: readonly string[], comment?: string): void {
    const k = key.join(SEP);
    const v = (value ?? []).join(SEP);
    if (this.#current.has(k)) return;
    this.#current.set(k, v);
    const old = this.#previous.get(k);
    if (old === v) return;
    const el = this.#element(key, value, comment);
    if (old !== undefined) tx.delete(el);
    tx.add(el);
  }

  /** Deletes what the previous sync had and this one did not ensure. */
  deleteLeftovers(tx: Transaction): void {
    for (const k of [...this.#previous.keys()].sort()) {
      if (!this.#current.has(k)) tx.delete(this.#element(k.split(SEP)));
    }
  }

  get contents(): ElementContents {
    return this.#current;
  }
}
