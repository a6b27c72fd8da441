// Who names what across the proxy-owned maps of one family, kept up to date element by element, so that the
// fake can tell after each element whether a program could now meet a dangling reference.

import type { IPFamily } from "@switchyard/basics";
import { decodeStruct } from "./codec.js";
import { addressName, type ServiceKeyRecord, scopeName } from "./contents.js";
import { type MapName, maps, SCOPE_EXTERNAL, SCOPE_INTERNAL, serviceFlags } from "./layout.js";

/** One scope of one frontend: the entries slot 0's count reaches. */
function scopeOf(key: ServiceKeyRecord, scope = key.scope): string {
  return `${addressName(key.address, key.dport, key.proto)} ${scopeName(scope)}`;
}

export class ReferenceIndex {
  readonly #family: IPFamily;
  /** Backend id → service slots naming it. */
  readonly #backendRefs = new Map<number, number>();
  /** Reverse NAT index → service entries naming it. */
  readonly #revNatRefs = new Map<number, number>();
  readonly #backends = new Set<number>();
  readonly #revNat = new Set<number>();
  /** Frontend scope → slot 0's count. */
  readonly #counts = new Map<string, number>();
  /** Frontend scope → slots 1..n present. */
  readonly #slots = new Map<string, Set<number>>();
  /** Internal frontend scopes an external slot 0 sends the node's sockets to (its TWO_SCOPES flag). */
  readonly #twoScopes = new Set<string>();
  /** Reverse NAT index → slot 0 entries carrying SOURCE_RANGES under it. */
  readonly #rangedHeads = new Map<number, number>();
  /** Reverse NAT index → source range entries under it. */
  readonly #ranges = new Map<number, number>();

  constructor(family: IPFamily) {
    this.#family = family;
  }

  add(map: MapName, key: Buffer, value: Buffer): void {
    this.#count(map, key, value, 1);
  }

  remove(map: MapName, key: Buffer, value: Buffer): void {
    this.#count(map, key, value, -1);
  }

  #count(map: MapName, keyBytes: Buffer, valueBytes: Buffer, by: 1 | -1): void {
    const f = this.#family;
    if (map === "backends")
      toggle(this.#backends, decodeStruct(maps.backends.key, f, keyBytes).backendId, by);
    if (map === "revNat") toggle(this.#revNat, decodeStruct(maps.revNat.key, f, keyBytes).revNatIndex, by);
    if (map === "sourceRange")
      bump(this.#ranges, decodeStruct(maps.sourceRange.key, f, keyBytes).revNatIndex, by);
    if (map !== "services") return;
    const key = decodeStruct(maps.services.key, f, keyBytes);
    const value = decodeStruct(maps.services.value, f, valueBytes);
    bump(this.#revNatRefs, value.revNatIndex, by);
    const scope = scopeOf(key);
    if (key.backendSlot === 0) {
      if (value.flags & serviceFlags.SOURCE_RANGES) bump(this.#rangedHeads, value.revNatIndex, by);
      if (by > 0) this.#counts.set(scope, value.count);
      else this.#counts.delete(scope);
      if (key.scope === SCOPE_EXTERNAL && value.flags & serviceFlags.TWO_SCOPES) {
        if (by > 0) this.#twoScopes.add(scopeOf(key, SCOPE_INTERNAL));
        else this.#twoScopes.delete(scopeOf(key, SCOPE_INTERNAL));
      }
      return;
    }
    bump(this.#backendRefs, value.backendId, by);
    let slots = this.#slots.get(scope);
    if (!slots) {
      slots = new Set();
      this.#slots.set(scope, slots);
    }
    toggle(slots, key.backendSlot, by);
    if (slots.size === 0) this.#slots.delete(scope);
  }

  /** What dangles now that `key` was written (value) or deleted (undefined), or undefined when nothing does. */
  check(map: MapName, keyBytes: Buffer, valueBytes: Buffer | undefined): string | undefined {
    const f = this.#family;
    if (map === "backends" && !valueBytes) {
      const id = decodeStruct(maps.backends.key, f, keyBytes).backendId;
      if (this.#backendRefs.has(id))
        return `backend ${id} is still named by ${this.#backendRefs.get(id)} slot(s)`;
    }
    if (map === "revNat" && !valueBytes) {
      const index = decodeStruct(maps.revNat.key, f, keyBytes).revNatIndex;
      if (this.#revNatRefs.has(index)) return `reverse NAT ${index} is still named by service entries`;
    }
    if (map === "sourceRange" && !valueBytes) {
      const index = decodeStruct(maps.sourceRange.key, f, keyBytes).revNatIndex;
      if (this.#rangedHeads.has(index) && !this.#ranges.has(index))
        return `reverse NAT ${index}'s last source range deleted while SOURCE_RANGES is set`;
    }
    if (map !== "services") return undefined;
    const key = decodeStruct(maps.services.key, f, keyBytes);
    const scope = scopeOf(key);
    if (!valueBytes) {
      const count = this.#counts.get(scope) ?? 0;
      if (key.backendSlot > 0 && key.backendSlot <= count) {
        return `${scope} slot ${key.backendSlot} deleted while slot 0 counts ${count}`;
      }
      if (key.backendSlot === 0 && this.#twoScopes.has(scope))
        return `${scope} slot 0 deleted while the external slot 0 says TWO_SCOPES`;
      return undefined;
    }
    const value = decodeStruct(maps.services.value, f, valueBytes);
    if (!this.#revNat.has(value.revNatIndex))
      return `${scope} slot ${key.backendSlot} names missing reverse NAT ${value.revNatIndex}`;
    if (key.backendSlot > 0) {
      return this.#backends.has(value.backendId)
        ? undefined
        : `${scope} slot ${key.backendSlot} names missing backend ${value.backendId}`;
    }
    const internal = scopeOf(key, SCOPE_INTERNAL);
    if (key.scope === SCOPE_EXTERNAL && value.flags & serviceFlags.TWO_SCOPES && !this.#counts.has(internal))
      return `${scope} slot 0 says TWO_SCOPES but ${internal} slot 0 is missing`;
    if (value.flags & serviceFlags.SOURCE_RANGES && !this.#ranges.has(value.revNatIndex))
      return `${scope} slot 0 has SOURCE_RANGES but reverse NAT ${value.revNatIndex} has no source range`;
    const slots = this.#slots.get(scope);
    for (let s = 1; s <= value.count; s++) {
      if (!slots?.has(s)) return `${scope} slot 0 counts ${value.count} but slot ${s} is missing`;
    }
    return undefined;
  }
}

function bump(refs: Map<number, number>, n: number, by: number): void {
  const next = (refs.get(n) ?? 0) + by;
  if (next > 0) refs.set(n, next);
  else refs.delete(n);
}

function toggle(set: Set<number>, n: number, by: number): void {
  if (by > 0) set.add(n);
  else set.delete(n);
}
