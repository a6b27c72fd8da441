// The writes of one sync, gathered by kind and handed out in the one order in which no program running between
// two of them meets a dangling reference. A batch runs element by element in the kernel, so the order holds
// inside a batch too:
//   1. backends written, 2. reverse NAT written (both before anything names them),
//   3. service slots 1..n, then slot 0 of each frontend (the count reaches only slots already there),
//   4. slot 0 of removed frontends deleted, then slots beyond a count (nothing reaches them any more),
//   5. reverse NAT, 6. backends no longer named by any slot.

import type { IPFamily } from "@switchyard/basics";
import { encodeStruct } from "./codec.js";
import type { BackendRecord, RevNatRecord, ServiceEntry, ServiceKeyRecord } from "./contents.js";
import { backendKey, backendValue, revNatKey, revNatValue, serviceKey, serviceValue } from "./layout.js";
import type { MapWriteStep } from "./map-store.js";

type Entry = readonly [key: Buffer, value: Buffer];

export class StepPlan {
  readonly #family: IPFamily;
  readonly #backendUpdates: Entry[] = [];
  readonly #revNatUpdates: Entry[] = [];
  readonly #slotUpdates: Entry[] = [];
  readonly #headUpdates: Entry[] = [];
  readonly #headDeletes: Buffer[] = [];
  readonly #slotDeletes: Buffer[] = [];
  readonly #revNatDeletes: Buffer[] = [];
  readonly #backendDeletes: Buffer[] = [];

  constructor(family: IPFamily) {
    this.#family = family;
  }

  updateBackend(backendId: number, value: BackendRecord): void {
    const f = this.#family;
    this.#backendUpdates.push([
      encodeStruct(backendKey, f, { backendId }),
      encodeStruct(backendValue, f, value),
    ]);
  }

  deleteBackend(backendId: number): void {
    this.#backendDeletes.push(encodeStruct(backendKey, this.#family, { backendId }));
  }

  updateRevNat(revNatIndex: number, value: RevNatRecord): void {
    const f = this.#family;
    this.#revNatUpdates.push([
      encodeStruct(revNatKey, f, { revNatIndex }),
      encodeStruct(revNatValue, f, value),
    ]);
  }

  deleteRevNat(revNatIndex: number): void {
    this.#revNatDeletes.push(encodeStruct(revNatKey, this.#family, { revNatIndex }));
  }

  updateService(entry: ServiceEntry): void {
    const f = this.#family;
    const encoded = [
      encodeStruct(serviceKey, f, entry.key),
      encodeStruct(serviceValue, f, entry.value),
    ] as const;
    (entry.key.backendSlot === 0 ? this.#headUpdates : this.#slotUpdates).push(encoded);
  }

  deleteService(key: ServiceKeyRecord): void {
    const encoded = encodeStruct(serviceKey, this.#family, key);
    (key.backendSlot === 0 ? this.#headDeletes : this.#slotDeletes).push(encoded);
  }

  /** One step per map and operation, in the order above; empty ones left out. */
  steps(): MapWriteStep[] {
    const steps: MapWriteStep[] = [
      { map: "backends", op: "update", entries: this.#backendUpdates },
      { map: "revNat", op: "update", entries: this.#revNatUpdates },
      { map: "services", op: "update", entries: [...this.#slotUpdates, ...this.#headUpdates] },
      { map: "services", op: "delete", keys: [...this.#headDeletes, ...this.#slotDeletes] },
      { map: "revNat", op: "delete", keys: this.#revNatDeletes },
      { map: "backends", op: "delete", keys: this.#backendDeletes },
    ];
    return steps.filter((s) => (s.op === "update" ? s.entries.length : s.keys.length) > 0);
  }
}
