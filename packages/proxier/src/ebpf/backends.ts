// The backends the renderer knows, by name ("10.180.0.1:80/TCP"): the ports claiming each (claims.ts), the id
// it has in the maps and the value the backends map holds under that id. All three sit on one entry per
// backend: a full sync at 10k Services handles 100k backends, and a lookup per concern was most of its time.

import type { IPFamily } from "@switchyard/basics";
import { type ClaimEntry, Claims } from "./claims.js";
import { decodeStruct } from "./codec.js";
import { addressName, type BackendRecord } from "./contents.js";
import type { StepPlan } from "./delta.js";
import { NumberPool } from "./ids.js";
import { backendKey, backendValue } from "./layout.js";
import { type BackendWant, sameBackend } from "./service-plan.js";

/** Backend ids are u32 in the maps; 0 means none. */
const MAX_BACKEND_ID = 0xffffffff;

export interface BackendEntry extends ClaimEntry<BackendWant> {
  /** 0: none given yet. */
  id: number;
  /** What the backends map holds under `id`; undefined: nothing written yet. */
  held: BackendWant | undefined;
}

export class Backends {
  readonly claims = new Claims<BackendWant, BackendEntry>(sameBackend, (key) => ({
    key,
    first: undefined,
    dirty: false,
    id: 0,
    held: undefined,
  }));
  readonly #ids = new NumberPool("backend ids", MAX_BACKEND_ID);
  /**
   * Live at start-up, by backend name: the id and value an earlier run wrote. A backend claimed again keeps
   * them (a restart leaves the entries, and the affinity and socket maps that hold ids, as they were); the
   * first sync deletes the rest.
   */
  readonly #live = new Map<string, { readonly id: number; readonly held: BackendWant }>();
  /** Ids live at start-up that no backend can keep (a second id of one backend): the first sync deletes them. */
  #unknown: number[] = [];
  #held = 0;

  /** The live entries of a first sync: every id stays taken until its backend keeps it or the sync deletes it. */
  static fromExisting(family: IPFamily, entries: readonly (readonly [Buffer, Buffer])[]): Backends {
    const backends = new Backends();
    const ids: number[] = [];
    for (const [k, v] of entries) {
      const id = decodeStruct(backendKey, family, k).backendId;
      const held = decodeStruct(backendValue, family, v);
      const name = addressName(held.address, held.port, held.proto);
      ids.push(id);
      if (backends.#live.has(name)) backends.#unknown.push(id);
      else backends.#live.set(name, { id, held });
    }
    backends.#ids.inUse(ids);
    return backends;
  }

  startSync(): void {
    this.#ids.startSync();
  }

  /** Plans the writes of the backends whose claims changed (giving new ones ids), and deletes unknown ones. */
  write(plan: StepPlan): void {
    for (const b of this.claims.takeDirty()) {
      const want = this.claims.winner(b)?.value;
      if (want) {
        if (b.id === 0) this.#number(b);
        if (!b.held || !sameBackend(b.held, want)) {
          plan.updateBackend(b.id, want);
          if (!b.held) this.#held++;
          b.held = want;
        }
        continue;
      }
      if (b.id !== 0) this.#release(plan, b);
      this.claims.forget(b);
    }
    // Live at start-up (an earlier run's) and claimed by no backend now.
    const unclaimed = [...this.#unknown, ...[...this.#live.values()].map((l) => l.id)];
    for (const id of unclaimed) {
      plan.deleteBackend(id);
      this.#ids.release(id);
    }
    this.#unknown = [];
    this.#live.clear();
  }

  /** Gives the backend the id it had live at start-up, with what the map holds under it; else a free one. */
  #number(b: BackendEntry): void {
    const live = this.#live.get(b.key);
    if (!live) {
      b.id = this.#ids.take();
      return;
    }
    this.#live.delete(b.key);
    b.id = live.id;
    b.held = live.held;
    this.#held++;
  }

  #release(plan: StepPlan, b: BackendEntry): void {
    this.#ids.release(b.id);
    if (b.held) {
      plan.deleteBackend(b.id);
      this.#held--;
    }
    b.id = 0;
    b.held = undefined;
  }

  /** Entries the backends map holds. */
  get size(): number {
    return this.#held + this.#unknown.length + this.#live.size;
  }

  /** Backend name → id, in the order the names were first claimed. */
  ids(): Map<string, number> {
    const out = new Map<string, number>();
    for (const b of this.claims.entries()) if (b.id !== 0) out.set(b.key, b.id);
    return out;
  }

  /** Id → what the map holds (the ids live at start-up left out: their values are not known). */
  contents(): Map<number, BackendRecord> {
    const out = new Map<number, BackendRecord>();
    for (const b of this.claims.entries()) if (b.held) out.set(b.id, b.held);
    return out;
  }
}
