// The backends the renderer knows, by name ("10.180.0.1:80/TCP"): the ports claiming each (claims.ts), the id
// it has in the maps and the value the backends map holds under that id. All three sit on one entry per
// backend: a full sync at 10k Services handles 100k backends, and a lookup per concern was most of its time.

import type { IPFamily } from "@switchyard/basics";
import { type ClaimEntry, Claims } from "./claims.js";
import { decodeStruct } from "./codec.js";
import type { BackendRecord } from "./contents.js";
import type { StepPlan } from "./delta.js";
import { NumberPool } from "./ids.js";
import { backendKey } from "./layout.js";
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
  /** Ids live at start-up, values unknown: the first sync deletes them. */
  #unknown: number[] = [];
  #held = 0;

  /** The live keys of a first sync: their ids are not handed out until the sync that deletes them is over. */
  static fromExisting(family: IPFamily, keys: readonly Buffer[]): Backends {
    const backends = new Backends();
    backends.#unknown = keys.map((k) => decodeStruct(backendKey, family, k).backendId);
    backends.#ids.reserve(backends.#unknown);
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
        if (b.id === 0) b.id = this.#ids.take();
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
    // Live at start-up (an earlier run's): no backend has these ids.
    for (const id of this.#unknown) plan.deleteBackend(id);
    this.#unknown = [];
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
    return this.#held + this.#unknown.length;
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
