// The elements of one shared set or map, kept from sync to sync: what the table holds, and which
// Service ports ask for each key. A sync only changes the claims of the Service ports it renders and
// then writes what changed for the keys they touched, so a partial sync costs what changed.
import { compareStrings } from "../model/endpoint.js";
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

/** A Service port's claim on a key; the first Service port in key order decides the value. */
interface Claim {
  readonly port: string;
  readonly element: KeyedElement;
}

const SEP = " . ";

export function keyedElement(
  key: readonly string[],
  value?: readonly string[],
  comment?: string,
): KeyedElement {
  return { k: key.join(SEP), v: (value ?? []).join(SEP), key, value, comment };
}

export class ContainerElements {
  readonly kind: "set" | "map";
  readonly name: string;
  /** What the table holds: key → value. */
  readonly #held: Map<string, string>;
  readonly #claims = new Map<string, Claim[]>();
  /** Keys whose claims changed since the last `write`, in the order they changed. */
  readonly #dirty = new Set<string>();

  /** `held` is what the table holds now (taken over, not copied); empty after a flush. */
  constructor(kind: "set" | "map", name: string, held: Map<string, string>) {
    this.kind = kind;
    this.name = name;
    this.#held = held;
  }

  #element(key: readonly string[], value?: readonly string[], comment?: string): ElementObject {
    return this.kind === "set"
      ? { kind: "element", set: this.name, key, comment }
      : { kind: "element", map: this.name, key, value, comment };
  }

  /** `port` asks for `element`; a second claim of the same key by the same port is ignored. */
  claim(port: string, element: KeyedElement): void {
    const claims = this.#claims.get(element.k);
    if (!claims) this.#claims.set(element.k, [{ port, element }]);
    else if (claims.some((c) => c.port === port)) return;
    else claims.push({ port, element });
    this.#dirty.add(element.k);
  }

  /** `port` no longer asks for the key. */
  release(port: string, k: string): void {
    const claims = this.#claims.get(k);
    if (!claims) return;
    const left = claims.filter((c) => c.port !== port);
    if (left.length === claims.length) return;
    if (left.length === 0) this.#claims.delete(k);
    else this.#claims.set(k, left);
    this.#dirty.add(k);
  }

  /**
   * Writes what the changed claims mean for the table: an element added, or replaced when its
   * value changed, for each claimed key (in the order they changed), then the keys nobody claims
   * any more deleted (sorted). `everything`: every held key is checked (a full sync).
   */
  write(tx: Transaction, everything: boolean): void {
    const gone: string[] = [];
    for (const k of this.#dirty) {
      const claims = this.#claims.get(k);
      if (!claims) {
        if (this.#held.has(k)) gone.push(k);
        continue;
      }
      const winner = claims.reduce((a, b) => (compareStrings(b.port, a.port) < 0 ? b : a)).element;
      const old = this.#held.get(k);
      if (old === winner.v) continue;
      const object = this.#element(winner.key, winner.value, winner.comment);
      if (old !== undefined) tx.delete(object);
      tx.add(object);
      this.#held.set(k, winner.v);
    }
    if (everything)
      for (const k of this.#held.keys()) if (!this.#claims.has(k) && !this.#dirty.has(k)) gone.push(k);
    // Only the leftovers are sorted: sorting every held key made each sync cost the whole cluster.
    for (const k of gone.sort()) {
      tx.delete(this.#element(k.split(SEP)));
      this.#held.delete(k);
    }
    this.#dirty.clear();
  }

  get contents(): ElementContents {
    return this.#held;
  }
}
