// What the kernel's services map holds, as far as the renderer knows: everything it wrote, and on a first sync
// the keys found live (their values unknown). (The backends and reverse NAT maps' entries are held with the
// rest of what is known of each backend, backends.ts, and reverse NAT key, rev-nat.ts.)
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
import { type MapName, serviceKey } from "./layout.js";

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
  /** Indexed by scope (SCOPE_EXTERNAL, SCOPE_INTERNAL); one object may serve both. */
  readonly scopes: readonly HeldScope[];
}

export class HeldMaps {
  /** By frontend name (addressName). */
  readonly #frontends = new Map<string, HeldFrontend>();
  /** Keys live at start-up, by frontend name: what they hold is not known, so each is rewritten or deleted. */
  readonly #unknown = new Map<string, ServiceKeyRecord[]>();
  #serviceCount = 0;

  /** The live keys of a first sync (values unknown, so every one is rewritten or deleted). */
  static fromExisting(family: IPFamily, existing: Partial<Record<MapName, readonly Buffer[]>>): HeldMaps {
    const held = new HeldMaps();
    for (const k of existing.services ?? []) {
      const key = decodeStruct(serviceKey, family, k);
      const name = addressName(key.address, key.dport, key.proto);
      const keys = held.#unknown.get(name);
      if (keys) keys.push(key);
      else held.#unknown.set(name, [key]);
      held.#serviceCount++;
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
    const old = this.#frontends.get(name);
    if (old) this.#serviceCount -= entryCount(old);
    if (entries) {
      this.#frontends.set(name, entries);
      this.#serviceCount += entryCount(entries);
    } else if (old) this.#frontends.delete(name);
  }

  /** Frontends with live keys of unknown value. */
  unknownFrontends(): string[] {
    return [...this.#unknown.keys()];
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
