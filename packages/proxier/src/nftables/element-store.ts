// Contents of the six shared sets/maps, diffed against the previous sync so that a partial
// sync only touches the elements that changed.
import type { ElementObject } from "./objects.js";
import type { Transaction } from "./transaction.js";

export type ElementContents = ReadonlyMap<string, string>;

/** One element as a Service port asked for it, with its joined key and value precomputed. */
export interface KeyedElement {
  readonly k: string;
  readonly v: string;
  readonly key: readonly string[];
  readonly value: readonly string[] | undefined;
  readonly comment: string | undefined;
}

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

  /**
   * Adds the element unless it is already there with the same value; a changed value is
   * replaced. Returns the element so a partial sync can replay it later without re-joining.
   */
  ensure(tx: Transaction, key: readonly string[], value?: readonly string[], comment?: string): KeyedElement {
    const el = { k: key.join(SEP), v: (value ?? []).join(SEP), key, value, comment };
    this.replay(tx, el);
    return el;
  }

  /** `ensure` for an element an earlier sync already keyed. */
  replay(tx: Transaction, el: KeyedElement): void {
    if (this.#current.has(el.k)) return;
    this.#current.set(el.k, el.v);
    const old = this.#previous.get(el.k);
    if (old === el.v) return;
    const object = this.#element(el.key, el.value, el.comment);
    if (old !== undefined) tx.delete(object);
    tx.add(object);
  }

  /** Deletes what the previous sync had and this one did not ensure. */
  deleteLeftovers(tx: Transaction): void {
    // Only the leftovers are sorted: sorting every held key made each partial sync cost
    // as much as the whole cluster.
    const gone: string[] = [];
    for (const k of this.#previous.keys()) if (!this.#current.has(k)) gone.push(k);
    for (const k of gone.sort()) tx.delete(this.#element(k.split(SEP)));
  }

  get contents(): ElementContents {
    return this.#current;
  }
}
