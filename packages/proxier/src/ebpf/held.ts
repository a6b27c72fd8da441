// What the kernel's proxy-owned maps hold, as far as the renderer knows: everything it wrote, and on a first
// sync the keys found live (their values unknown: null). Service entries are grouped by frontend so that a sync
// looks only at the frontends it changes.

import type { IPFamily } from "@switchyard/basics";
import { decodeStruct } from "./codec.js";
import {
  addressName,
  type BackendRecord,
  type MapContents,
  type RevNatRecord,
  type ServiceEntry,
  type ServiceKeyRecord,
  type ServiceValueRecord,
  serviceEntryName,
} from "./contents.js";
import { backendKey, type MapName, revNatKey, serviceKey } from "./layout.js";

/** A held service entry; value null: the key is live, what it holds is not known. */
export interface HeldServiceEntry {
  readonly key: ServiceKeyRecord;
  readonly value: ServiceValueRecord | null;
}

export class HeldMaps {
  /** Frontend name → entry name → entry. */
  readonly services = new Map<string, Map<string, HeldServiceEntry>>();
  readonly backends = new Map<number, BackendRecord | null>();
  readonly revNat = new Map<number, RevNatRecord | null>();
  #serviceCount = 0;

  /** The live keys of a first sync (values unknown, so every one is rewritten or deleted). */
  static fromExisting(family: IPFamily, existing: Partial<Record<MapName, readonly Buffer[]>>): HeldMaps {
    const held = new HeldMaps();
    for (const k of existing.services ?? []) {
      const key = decodeStruct(serviceKey, family, k);
      held.setService(addressName(key.address, key.dport, key.proto), serviceEntryName(key), {
        key,
        value: null,
      });
    }
    for (const k of existing.backends ?? [])
      held.backends.set(decodeStruct(backendKey, family, k).backendId, null);
    for (const k of existing.revNat ?? [])
      held.revNat.set(decodeStruct(revNatKey, family, k).revNatIndex, null);
    return held;
  }

  get serviceCount(): number {
    return this.#serviceCount;
  }

  /** Holds `entry` under its frontend's name (addressName) and its own (serviceEntryName). */
  setService(frontend: string, name: string, entry: HeldServiceEntry): void {
    let entries = this.services.get(frontend);
    if (!entries) {
      entries = new Map();
      this.services.set(frontend, entries);
    }
    if (!entries.has(name)) this.#serviceCount++;
    entries.set(name, entry);
  }

  deleteService(frontend: string, name: string): void {
    const entries = this.services.get(frontend);
    if (!entries?.delete(name)) return;
    this.#serviceCount--;
    if (entries.size === 0) this.services.delete(frontend);
  }

  /** The maps as MapContents; after a sync every value is known. */
  contents(family: IPFamily): MapContents {
    const services = new Map<string, ServiceEntry>();
    for (const entries of this.services.values()) {
      for (const [name, e] of entries) if (e.value) services.set(name, { key: e.key, value: e.value });
    }
    return { family, services, backends: known(this.backends), revNat: known(this.revNat) };
  }
}

function known<V>(map: ReadonlyMap<number, V | null>): Map<number, V> {
  const out = new Map<number, V>();
  for (const [k, v] of map) if (v !== null) out.set(k, v);
  return out;
}
