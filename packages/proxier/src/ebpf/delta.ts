// The writes of one sync, gathered by kind and handed out in the one order in which no program running between
// two of them meets a dangling reference. A batch runs element by element in the kernel, so the order holds
// inside a batch too:
//   1. backends written, 2. reverse NAT written (both before anything names them), source ranges written
//      (before a SOURCE_RANGES flag that needs them),
//   3. service slots 1..n, then slot 0 of each frontend (the count reaches only slots already there): internal
//      scopes' before external ones' (an external slot 0 with TWO_SCOPES sends sockets to the internal scope),
//   4. slot 0 of removed frontends deleted, external scopes' before internal ones' (so a TWO_SCOPES flag still
//      set names an internal scope still there), then slots beyond a count (nothing reaches them any more),
//   5. source ranges no longer wanted (their flag or frontend is gone), reverse NAT,
//   6. backends no longer named by any slot.
// Keys and values are written field by field straight into each kind's buffers (entry-buffer.ts), packed as
// the kernel's batch operations take them.

import { type IPFamily, parseCIDR } from "@switchyard/basics";
import { fieldWriters } from "./codec.js";
import type { BackendRecord, RevNatRecord, ServiceValueRecord } from "./contents.js";
import { batchEntries, batchKeys, type EntryBatch, EntryBuffer } from "./entry-buffer.js";
import {
  backendKey,
  backendValue,
  type MapName,
  revNatKey,
  revNatValue,
  SCOPE_INTERNAL,
  SOURCE_RANGE_KEY_BITS,
  type Struct,
  serviceKey,
  serviceValue,
  sourceRangeKey,
  sourceRangeValue,
  structLayout,
} from "./layout.js";
import { type MapWriteStep, stepSize } from "./map-store.js";

/** A frontend in one scope: the key of its service entries but the slot, its address already in bytes. */
export interface FrontendScopeKey {
  readonly address: Uint8Array;
  readonly dport: number;
  readonly proto: number;
  readonly scope: number;
}

function writersOf(family: IPFamily) {
  return {
    serviceKey: fieldWriters(serviceKey, family),
    serviceValue: fieldWriters(serviceValue, family),
    backendKey: fieldWriters(backendKey, family),
    backendValue: fieldWriters(backendValue, family),
    revNatKey: fieldWriters(revNatKey, family),
    revNatValue: fieldWriters(revNatValue, family),
    sourceRangeKey: fieldWriters(sourceRangeKey, family),
    sourceRangeValue: fieldWriters(sourceRangeValue, family),
  };
}

export class StepPlan {
  readonly #w: ReturnType<typeof writersOf>;
  readonly #backendUpdates: EntryBuffer;
  readonly #revNatUpdates: EntryBuffer;
  readonly #slotUpdates: EntryBuffer;
  /** Slot 0 writes and deletes, by scope (SCOPE_EXTERNAL, SCOPE_INTERNAL). */
  readonly #headUpdates: readonly [EntryBuffer, EntryBuffer];
  readonly #headDeletes: readonly [EntryBuffer, EntryBuffer];
  readonly #slotDeletes: EntryBuffer;
  readonly #revNatDeletes: EntryBuffer;
  readonly #backendDeletes: EntryBuffer;
  readonly #rangeUpdates: EntryBuffer;
  readonly #rangeDeletes: EntryBuffer;

  constructor(family: IPFamily) {
    this.#w = writersOf(family);
    const entries = (key: Struct, value?: Struct) =>
      new EntryBuffer(structLayout(key, family).size, value ? structLayout(value, family).size : 0);
    this.#backendUpdates = entries(backendKey, backendValue);
    this.#revNatUpdates = entries(revNatKey, revNatValue);
    this.#slotUpdates = entries(serviceKey, serviceValue);
    this.#headUpdates = [entries(serviceKey, serviceValue), entries(serviceKey, serviceValue)];
    this.#headDeletes = [entries(serviceKey), entries(serviceKey)];
    this.#slotDeletes = entries(serviceKey);
    this.#revNatDeletes = entries(revNatKey);
    this.#backendDeletes = entries(backendKey);
    this.#rangeUpdates = entries(sourceRangeKey, sourceRangeValue);
    this.#rangeDeletes = entries(sourceRangeKey);
  }

  /** Admits `range` (CIDR text of this family) for the frontend with this reverse NAT index. */
  updateSourceRange(revNatIndex: number, range: string): void {
    const to = this.#rangeUpdates;
    const i = to.append();
    this.#writeSourceRangeKey(to.keys, to.keyAt(i), revNatIndex, range);
    this.#w.sourceRangeValue.allowed(to.values, to.valueAt(i), 1);
  }

  deleteSourceRange(revNatIndex: number, range: string): void {
    const to = this.#rangeDeletes;
    const i = to.append();
    this.#writeSourceRangeKey(to.keys, to.keyAt(i), revNatIndex, range);
  }

  #writeSourceRangeKey(out: Buffer, at: number, revNatIndex: number, range: string): void {
    const cidr = parseCIDR(range);
    if (!cidr) throw new Error(`source range ${range} is not a CIDR`);
    const w = this.#w.sourceRangeKey;
    w.prefixLen(out, at, SOURCE_RANGE_KEY_BITS + cidr.prefix);
    w.revNatIndex(out, at, revNatIndex);
    w.address(out, at, cidr.ip.bytes);
  }

  updateBackend(backendId: number, value: BackendRecord): void {
    const to = this.#backendUpdates;
    const i = to.append();
    this.#w.backendKey.backendId(to.keys, to.keyAt(i), backendId);
    const w = this.#w.backendValue;
    const out = to.values;
    const v = to.valueAt(i);
    w.address(out, v, value.address);
    w.port(out, v, value.port);
    w.proto(out, v, value.proto);
    w.flags(out, v, value.flags);
  }

  deleteBackend(backendId: number): void {
    const to = this.#backendDeletes;
    const i = to.append();
    this.#w.backendKey.backendId(to.keys, to.keyAt(i), backendId);
  }

  updateRevNat(revNatIndex: number, value: RevNatRecord): void {
    const to = this.#revNatUpdates;
    const i = to.append();
    this.#w.revNatKey.revNatIndex(to.keys, to.keyAt(i), revNatIndex);
    const w = this.#w.revNatValue;
    w.address(to.values, to.valueAt(i), value.address);
    w.port(to.values, to.valueAt(i), value.port);
  }

  deleteRevNat(revNatIndex: number): void {
    const to = this.#revNatDeletes;
    const i = to.append();
    this.#w.revNatKey.revNatIndex(to.keys, to.keyAt(i), revNatIndex);
  }

  /** Sets a service entry (slot 0 or a backend slot). */
  updateService(key: FrontendScopeKey, backendSlot: number, value: ServiceValueRecord): void {
    const to = backendSlot === 0 ? this.#head(this.#headUpdates, key) : this.#slotUpdates;
    const i = to.append();
    this.#writeServiceKey(to.keys, to.keyAt(i), key, backendSlot);
    this.#writeServiceValue(to.values, to.valueAt(i), value);
  }

  deleteService(key: FrontendScopeKey, backendSlot: number): void {
    const to = backendSlot === 0 ? this.#head(this.#headDeletes, key) : this.#slotDeletes;
    const i = to.append();
    this.#writeServiceKey(to.keys, to.keyAt(i), key, backendSlot);
  }

  #head(byScope: readonly [EntryBuffer, EntryBuffer], key: FrontendScopeKey): EntryBuffer {
    return key.scope === SCOPE_INTERNAL ? byScope[1] : byScope[0];
  }

  #writeServiceValue(out: Buffer, at: number, value: ServiceValueRecord): void {
    const w = this.#w.serviceValue;
    w.backendId(out, at, value.backendId);
    w.affinityTimeout(out, at, value.affinityTimeout);
    w.count(out, at, value.count);
    w.revNatIndex(out, at, value.revNatIndex);
    w.flags(out, at, value.flags);
  }

  #writeServiceKey(out: Buffer, at: number, key: FrontendScopeKey, backendSlot: number): void {
    const w = this.#w.serviceKey;
    w.address(out, at, key.address);
    w.dport(out, at, key.dport);
    w.backendSlot(out, at, backendSlot);
    w.proto(out, at, key.proto);
    w.scope(out, at, key.scope);
  }

  /** One step per map and operation, in the order above; empty ones left out. */
  steps(): MapWriteStep[] {
    const steps: MapWriteStep[] = [
      updateStep("backends", this.#backendUpdates),
      updateStep("revNat", this.#revNatUpdates),
      updateStep("sourceRange", this.#rangeUpdates),
      updateStep("services", this.#slotUpdates, this.#headUpdates[1], this.#headUpdates[0]),
      deleteStep("services", this.#headDeletes[0], this.#headDeletes[1], this.#slotDeletes),
      deleteStep("sourceRange", this.#rangeDeletes),
      deleteStep("revNat", this.#revNatDeletes),
      deleteStep("backends", this.#backendDeletes),
    ];
    return steps.filter((s) => stepSize(s) > 0);
  }
}

/** One update step of these buffers' entries, in this order; its `entries` views built when read. */
function updateStep(map: MapName, ...from: EntryBuffer[]): MapWriteStep {
  const batch = joined(from);
  const entries = once(() => batchEntries(batch));
  return {
    map,
    op: "update",
    batch,
    get entries() {
      return entries();
    },
  };
}

function deleteStep(map: MapName, ...from: EntryBuffer[]): MapWriteStep {
  const batch = joined(from);
  const keys = once(() => batchKeys(batch));
  return {
    map,
    op: "delete",
    batch,
    get keys() {
      return keys();
    },
  };
}

/** `make`'s value, made on the first call. */
function once<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => {
    made ??= { value: make() };
    return made.value;
  };
}

/** The buffers' batches as one (a copy only when more than one has entries). */
function joined(from: readonly EntryBuffer[]): EntryBatch {
  const batches = from.map((b) => b.batch()).filter((b) => b.count > 0);
  const first = batches[0] ?? from[0]?.batch();
  if (!first) throw new Error("joined: no buffers");
  if (batches.length <= 1) return first;
  return {
    count: batches.reduce((n, b) => n + b.count, 0),
    keys: Buffer.concat(batches.map((b) => b.keys)),
    values: Buffer.concat(batches.map((b) => b.values)),
    keySize: first.keySize,
    valueSize: first.valueSize,
  };
}
