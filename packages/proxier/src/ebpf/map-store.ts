// What the eBPF backend needs from the kernel's maps, and what the fake offers too: ordered batches of raw
// updates and deletions, and a dump. The renderer orders the steps so that no reader (a program running between
// two steps) ever meets a dangling reference: backends and reverse NAT before the service slots that name them,
// slots before the count that reaches them, and deletions the other way round.

import type { IPFamily } from "@switchyard/basics";
import type { EntryBatch } from "./entry-buffer.js";
import type { MapName } from "./layout.js";

/**
 * One batch against one map: all its entries are written (or deleted) by one batch operation. A rendered step
 * also carries them packed (`batch`, as the kernel takes them); its `entries` or `keys` are views of that,
 * built when first read.
 */
export type MapWriteStep =
  | {
      readonly map: MapName;
      readonly op: "update";
      readonly entries: readonly (readonly [key: Buffer, value: Buffer])[];
      readonly batch?: EntryBatch;
    }
  | {
      readonly map: MapName;
      readonly op: "delete";
      readonly keys: readonly Buffer[];
      readonly batch?: EntryBatch;
    };

/** How many entries the step writes or deletes. */
export function stepSize(step: MapWriteStep): number {
  return step.batch?.count ?? (step.op === "update" ? step.entries.length : step.keys.length);
}

export interface BPFMapStore {
  /** Runs the steps in order; throws at the first the kernel refuses (steps before it stay written). */
  write(family: IPFamily, steps: readonly MapWriteStep[]): Promise<void>;
  /** Every entry of one map, as raw keys and values. */
  dump(family: IPFamily, map: MapName): Promise<Array<[key: Buffer, value: Buffer]>>;
}
