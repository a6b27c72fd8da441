// What the kernel's services map holds, as far as the renderer knows: everything it wrote, and on a first sync
// what it found live: a frontend whose entries an earlier run wrote whole (slot 0 and the slots its count
// reaches, in each scope it has) is held as written, so a restart rewrites only what changed; entries that do
// not add up to one are held as keys of unknown value, each rewritten or deleted. (The backends and reverse NAT
// maps' entries are held with the rest of what is known of each backend, backends.ts, and reverse NAT key,
// rev-nat.ts.)
//
// A frontend's service entries are held in the form they are written from (per scope, slot 0's fields and the
// backend ids of slots 1..n) rather than entry by entry: a sync compares a frontend field by field without
// building its entries, and 10k Services hold some 10k of these instead of 220k entries the garbage collector
// would trace on every collection.

import type { IPFamily } from "@switchyard/basics";
import { decodeStruct } from "./codec.js";
import {
  addressName,
  type BackendRecord,
  type MapContents,
  type RevNatRecord,
  type ServiceEntry,
  type ServiceKeyRecord,
  serviceEntryName,
} from "./contents.js";
import {
  type MapName,
  SCOPE_EXTERNAL,
  SCOPE_INTERNAL,
  serviceFlags,
  serviceKey,
  serviceValue,
} from "./layout.js";

/** One scope of a frontend: slot 0 holds these flags, the timeout and the count; slots 1..n these ids. */
export interface HeldScope {
  readonly flags: number;
  readonly affinityTimeout: number;
  readonly backendIds: readonly number[];
}

/** A frontend's service entries: every one of them carries the frontend's reverse NAT index. */
export interface HeldFrontend {
  readonly address: string;
  readonly port: number;
  readonly proto: number;
  readonly revNatIndex: number;
  /**
   * Indexed by scope: [external] when the node's sockets meet what traffic from outside meets, else [external
   * (its flags with TWO_SCOPES), internal].
   */
  readonly scopes: readonly HeldScope[];
}

export class HeldMaps {
  /** By frontend name (addressName). */
  readonly #frontends = new Map<string, HeldFrontend>();
  /** Keys live at start-up, by frontend name: what they hold is not known, so each is rewritten or deleted. */
  readonly #unknown = new Map<string, ServiceKeyRecord[]>();
  /** Frontends live whole at start-up that no sync has set yet: the first sync deletes the ones still here. */
  readonly #found = new Set<string>();
  #serviceCount = 0;

  /** The live entries of a first sync, by frontend: held as written where they add up to one, else as keys. */
  static fromExisting(
    family: IPFamily,
    existing: Partial<Record<MapName, readonly (readonly [Buffer, Buffer])[]>>,
  ): HeldMaps {
    const held = new HeldMaps();
    const byFrontend = new Map<string, ServiceEntry[]>();
    for (const [k, v] of existing.services ?? []) {
      const key = decodeStruct(serviceKey, family, k);
      const name = addressName(key.address, key.dport, key.proto);
      const entry = { key, value: decodeStruct(serviceValue, family, v) };
      const entries = byFrontend.get(name);
      if (entries) entries.push(entry);
      else byFrontend.set(name, [entry]);
      held.#serviceCount++;
    }
    for (const [name, entries] of byFrontend) {
      const whole = heldFrontendOf(entries);
      if (whole) {
        held.#frontends.set(name, whole);
        held.#found.add(name);
      } else {
        held.#unknown.set(
          name,
          entries.map((e) => e.key),
        );
      }
    }
    return held;
  }

  get serviceCount(): number {
    return this.#serviceCount;
  }

  frontend(name: string): HeldFrontend | undefined {
    return this.#frontends.get(name);
  }

  /** Records what the frontend's entries hold now (undefined: none). */
  setFrontend(name: string, entries: HeldFrontend | undefined): void {
    this.#found.delete(name);
    const old = this.#frontends.get(name);
    if (old) this.#serviceCount -= entryCount(old);
    if (entries) {
      this.#frontends.set(name, entries);
      this.#serviceCount += entryCount(entries);
    } else if (old) this.#frontends.delete(name);
  }

  /** Frontends live at start-up that this sync did not set: keys of unknown value, or whole ones left over. */
  leftFrontends(): string[] {
    return [...this.#unknown.keys(), ...this.#found];
  }

  /** The frontend's live keys of unknown value, forgotten here: the caller rewrites or deletes each. */
  takeUnknown(name: string): readonly ServiceKeyRecord[] | undefined {
    const keys = this.#unknown.get(name);
    if (!keys) return undefined;
    this.#unknown.delete(name);
    this.#serviceCount -= keys.length;
    return keys;
  }

  /** The maps as MapContents, with the other two maps' entries given; after a sync every value is known. */
  contents(
    family: IPFamily,
    backends: ReadonlyMap<number, BackendRecord>,
    revNat: ReadonlyMap<number, RevNatRecord>,
  ): MapContents {
    const services = new Map<string, ServiceEntry>();
    for (const f of this.#frontends.values()) {
      for (const e of serviceEntriesOf(f)) services.set(serviceEntryName(e.key), e);
    }
    return { family, services, backends, revNat };
  }
}

/**
 * The held form of one frontend's live entries, if they are what a sync writes: an external slot 0 and the
 * slots its count reaches, an internal scope likewise exactly when the external slot 0 says TWO_SCOPES, and one
 * reverse NAT index throughout. Anything else (a write cut short, another writer) is undefined.
 */
function heldFrontendOf(entries: readonly ServiceEntry[]): HeldFrontend | undefined {
  const [first] = entries;
  if (!first) return undefined;
  const slots = new Map(entries.map((e) => [`${e.key.scope} ${e.key.backendSlot}`, e.value]));
  const revNatIndex = first.value.revNatIndex;
  const scopeOf = (scope: number): HeldScope | undefined => {
    const head = slots.get(`${scope} 0`);
    if (!head || head.revNatIndex !== revNatIndex) return undefined;
    const backendIds: number[] = [];
    for (let slot = 1; slot <= head.count; slot++) {
      const value = slots.get(`${scope} ${slot}`);
      if (!value || value.revNatIndex !== revNatIndex || value.backendId === 0) return undefined;
      backendIds.push(value.backendId);
    }
    return { flags: head.flags, affinityTimeout: head.affinityTimeout, backendIds };
  };
  const external = scopeOf(SCOPE_EXTERNAL);
  if (!external) return undefined;
  const twoScopes = (external.flags & serviceFlags.TWO_SCOPES) !== 0;
  const internal = twoScopes ? scopeOf(SCOPE_INTERNAL) : undefined;
  if (twoScopes && !internal) return undefined;
  const scopes = internal ? [external, internal] : [external];
  const f: HeldFrontend = {
    address: first.key.address,
    port: first.key.dport,
    proto: first.key.proto,
    revNatIndex,
    scopes,
  };
  // Entries beyond these (a slot past a count, an internal scope without the flag) make it not whole.
  return entryCount(f) === entries.length ? f : undefined;
}

/** The entries a held frontend stands for: per scope, slot 0 then slots 1..n. */
function serviceEntriesOf(f: HeldFrontend): ServiceEntry[] {
  const out: ServiceEntry[] = [];
  f.scopes.forEach((s, scope) => {
    const key = (backendSlot: number) => ({
      address: f.address,
      dport: f.port,
      backendSlot,
      proto: f.proto,
      scope,
    });
    const revNatIndex = f.revNatIndex;
    const count = s.backendIds.length;
    out.push({
      key: key(0),
      value: { backendId: 0, affinityTimeout: s.affinityTimeout, count, revNatIndex, flags: s.flags },
    });
    s.backendIds.forEach((backendId, i) => {
      out.push({
        key: key(i + 1),
        value: { backendId, affinityTimeout: 0, count: 0, revNatIndex, flags: 0 },
      });
    });
  });
  return out;
}

/** Slot 0 and slots 1..n of every scope. */
function entryCount(f: HeldFrontend): number {
  let n = 0;
  for (const s of f.scopes) n += 1 + s.backendIds.length;
  return n;
}
