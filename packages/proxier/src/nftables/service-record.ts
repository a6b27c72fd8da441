// What one Service port contributed to the table in the last sync that rendered it. When it
// changes, a partial sync takes back exactly this (element claims, chain and affinity set
// references, its no-local-endpoints count) before writing the port anew; unchanged ports are
// not looked at.
import type { KeyedElement } from "./element-store.js";
import type { ContainerName } from "./skeleton.js";

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
