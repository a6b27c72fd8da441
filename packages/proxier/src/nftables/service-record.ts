// What one Service port contributed to the table in the last sync. A partial sync replays
// this for every unchanged Service instead of categorizing its endpoints, hashing its chain
// names and rebuilding its elements, so its cost follows the change, not the cluster.
import type { ElementStore, KeyedElement } from "./element-store.js";
import type { ContainerName } from "./skeleton.js";
import type { Transaction } from "./transaction.js";

export interface ServicePortOutcome {
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

export interface RecordedElement {
  readonly container: ContainerName;
  readonly element: KeyedElement;
}

/** Filled while a Service port is written; frozen into a ServicePortRecord afterwards. */
export interface ServicePortRecordBuilder {
  readonly chains: string[];
  readonly affinitySets: string[];
  /** In the order they were ensured, so a replay emits the same operations in the same order. */
  readonly elements: RecordedElement[];
}

export interface ServicePortRecord extends ServicePortOutcome {
  readonly chains: readonly string[];
  readonly affinitySets: readonly string[];
  readonly elements: readonly RecordedElement[];
}

export function newRecordBuilder(): ServicePortRecordBuilder {
  return { chains: [], affinitySets: [], elements: [] };
}

export interface ReplayContext {
  readonly tx: Transaction;
  readonly stores: Readonly<Record<ContainerName, ElementStore>>;
  readonly activeChains: Set<string>;
  readonly activeAffinitySets: Set<string>;
}

/**
 * Does what writing the Service port with its chains skipped would do: marks its chains and
 * affinity sets active and ensures its elements. Elements still go through the stores,
 * because a changed Service may have released a key this one now gets.
 */
export function replayServicePort(ctx: ReplayContext, record: ServicePortRecord): void {
  for (const chain of record.chains) ctx.activeChains.add(chain);
  for (const set of record.affinitySets) ctx.activeAffinitySets.add(set);
  for (const { container, element } of record.elements) ctx.stores[container].replay(ctx.tx, element);
}
