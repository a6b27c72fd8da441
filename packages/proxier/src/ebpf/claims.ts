// Keys that several Service ports may ask for (a frontend two Services list, a backend two Services share),
// each port with its own value. The port first in key order decides the value, whatever order the ports were
// rendered in, so a partial sync ends where a full one would. Keys whose claims changed are remembered for the
// sync to write.
import { compareStrings } from "../model/endpoint.js";

/** One port's claim. Claims of a key are kept in a small array: most keys have one, and a Map each costs. */
interface Claim<V> {
  readonly port: string;
  value: V;
}

export class Claims<V> {
  readonly #byKey = new Map<string, Claim<V>[]>();
  #dirty = new Set<string>();

  claim(key: string, port: string, value: V): void {
    const claims = this.#byKey.get(key);
    const mine = claims?.find((c) => c.port === port);
    if (mine) mine.value = value;
    else if (claims) claims.push({ port, value });
    else this.#byKey.set(key, [{ port, value }]);
    this.#dirty.add(key);
  }

  release(key: string, port: string): void {
    const claims = this.#byKey.get(key);
    const at = claims?.findIndex((c) => c.port === port) ?? -1;
    if (!claims || at < 0) return;
    claims.splice(at, 1);
    if (claims.length === 0) this.#byKey.delete(key);
    this.#dirty.add(key);
  }

  /** The value of the first claiming port in key order; undefined when nobody claims the key. */
  winner(key: string): V | undefined {
    const claims = this.#byKey.get(key);
    if (!claims) return undefined;
    let best = claims[0];
    for (const c of claims) if (best && compareStrings(c.port, best.port) < 0) best = c;
    return best?.value;
  }

  has(key: string): boolean {
    return this.#byKey.has(key);
  }

  /** Keys whose claims changed since the last call, in the order they changed. */
  takeDirty(): Set<string> {
    const dirty = this.#dirty;
    this.#dirty = new Set();
    return dirty;
  }
}
