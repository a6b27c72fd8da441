// Reverse NAT entries: one per frontend address and port (a TCP and a UDP frontend of one address and port
// share it), numbered for as long as some frontend present uses it. As in backends.ts, all that is known about
// one (its users, its index, whether the map holds it) sits on one entry, found with one lookup.

import { hostPort, type IPFamily } from "@switchyard/basics";
import { decodeStruct } from "./codec.js";
import type { RevNatRecord } from "./contents.js";
import type { StepPlan } from "./delta.js";
import { NumberPool } from "./ids.js";
import { revNatKey, revNatValue } from "./layout.js";
import type { FrontendWant } from "./service-plan.js";

/** Reverse NAT indexes are u16 in the maps; 0 means none. */
const MAX_REV_NAT_INDEX = 0xffff;

interface RevNatEntry {
  /** The frontend address:port, "172.30.0.41:80". */
  readonly key: string;
  readonly value: RevNatRecord;
  /** Names of the frontends present that use it. */
  readonly users: string[];
  /** 0: none given yet. */
  index: number;
  /** The map holds it under `index`. */
  held: boolean;
  /** Listed for the sync to write. */
  changed: boolean;
}

/** The reverse NAT key of a frontend name: "172.30.0.41:80/TCP" → "172.30.0.41:80". */
function revNatKeyOf(frontend: string): string {
  return frontend.slice(0, frontend.lastIndexOf("/"));
}

export class RevNats {
  readonly #entries = new Map<string, RevNatEntry>();
  readonly #indexes = new NumberPool(
    "reverse NAT indexes (one per frontend address and port)",
    MAX_REV_NAT_INDEX,
  );
  /**
   * Live at start-up, by address:port: the index an earlier run gave it. An entry used again keeps it (the
   * sockets a restart finds connected name it in reverse_sk); the first sync deletes the rest.
   */
  readonly #live = new Map<string, number>();
  /** Indexes live at start-up that no entry can keep (a second index of one address:port). */
  #unknown: number[] = [];
  #changed: RevNatEntry[] = [];
  #held = 0;

  /** The live entries of a first sync: every index stays taken until its entry keeps it or the sync deletes it. */
  static fromExisting(family: IPFamily, entries: readonly (readonly [Buffer, Buffer])[]): RevNats {
    const revNats = new RevNats();
    const indexes: number[] = [];
    for (const [k, v] of entries) {
      const index = decodeStruct(revNatKey, family, k).revNatIndex;
      const value = decodeStruct(revNatValue, family, v);
      const key = hostPort(value.address, value.port);
      indexes.push(index);
      if (revNats.#live.has(key)) revNats.#unknown.push(index);
      else revNats.#live.set(key, index);
    }
    revNats.#indexes.inUse(indexes);
    return revNats;
  }

  startSync(): void {
    this.#indexes.startSync();
  }

  /** Records that the frontend is present with `want` as its winning claim, or gone (undefined). */
  use(frontend: string, want: FrontendWant | undefined): void {
    const key = revNatKeyOf(frontend);
    let entry = this.#entries.get(key);
    if (want && !entry?.users.includes(frontend)) {
      if (!entry) {
        entry = {
          key,
          value: { address: want.address, port: want.port },
          users: [],
          index: 0,
          held: false,
          changed: false,
        };
        this.#entries.set(key, entry);
      }
      entry.users.push(frontend);
    } else if (!want && entry?.users.includes(frontend)) {
      entry.users.splice(entry.users.indexOf(frontend), 1);
    } else return;
    if (!entry.changed) {
      entry.changed = true;
      this.#changed.push(entry);
    }
  }

  /** Plans the writes of the entries whose users changed (numbering new ones), and deletes unknown ones. */
  write(plan: StepPlan): void {
    for (const e of this.#changed) {
      e.changed = false;
      if (e.users.length > 0) {
        if (e.index === 0) this.#number(e);
        if (!e.held) {
          plan.updateRevNat(e.index, e.value);
          e.held = true;
          this.#held++;
        }
        continue;
      }
      if (e.index !== 0) {
        this.#indexes.release(e.index);
        if (e.held) {
          plan.deleteRevNat(e.index);
          this.#held--;
        }
      }
      this.#entries.delete(e.key);
    }
    this.#changed = [];
    // Live at start-up (an earlier run's) and used by no frontend now.
    for (const index of [...this.#unknown, ...this.#live.values()]) {
      plan.deleteRevNat(index);
      this.#indexes.release(index);
    }
    this.#unknown = [];
    this.#live.clear();
  }

  /** Gives the entry the index it had live at start-up (the map holds it already); else a free one. */
  #number(e: RevNatEntry): void {
    const live = this.#live.get(e.key);
    if (live === undefined) {
      e.index = this.#indexes.take();
      return;
    }
    this.#live.delete(e.key);
    e.index = live;
    e.held = true;
    this.#held++;
  }

  /** The index of the frontend's reverse NAT entry; 0 when it has none. */
  indexOf(frontend: string): number {
    return this.#entries.get(revNatKeyOf(frontend))?.index ?? 0;
  }

  /** Entries the map holds. */
  get size(): number {
    return this.#held + this.#unknown.length + this.#live.size;
  }

  /** Frontend address:port → index. */
  indexes(): Map<string, number> {
    const out = new Map<string, number>();
    for (const e of this.#entries.values()) if (e.index !== 0) out.set(e.key, e.index);
    return out;
  }

  /** Index → what the map holds (the indexes live at start-up left out: their values are not known). */
  contents(): Map<number, RevNatRecord> {
    const out = new Map<number, RevNatRecord>();
    for (const e of this.#entries.values()) if (e.held) out.set(e.index, e.value);
    return out;
  }
}
