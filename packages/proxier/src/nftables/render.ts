// One nftables sync as a pure function: (cluster state, previous rendered state) in,
// transactions and the next state out. Running the transactions is the caller's job.

import { compareStrings } from "../model/endpoint.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { namespacedName } from "../model/service-port-name.js";
import { sortedKeys } from "../util/sorted-keys.js";
import { type ElementContents, ElementStore } from "./element-store.js";
import { isAffinitySetName, isServiceChainName, KUBE_PROXY_TABLE } from "./names.js";
import { ipX, type NFTablesOptions } from "./options.js";
import { newRecordBuilder, replayServicePort, type ServicePortRecord } from "./service-record.js";
import { writeServicePort } from "./service-rules.js";
import { CONTAINERS, type ContainerName, writeSkeleton } from "./skeleton.js";
import { Transaction } from "./transaction.js";

/** How long a flushed per-service chain waits before it is deleted (see renderNFTables). */
export const STALE_CHAIN_DELETE_DELAY_MS = 1000;

/** What the table holds after a successful sync; the input of the next one. */
export interface NFTablesState {
  readonly elements: ReadonlyMap<string, ElementContents>;
  /** Per-service chains present in the table (active and stale). */
  readonly serviceChains: ReadonlySet<string>;
  readonly affinitySets: ReadonlySet<string>;
  /** Stale chain → ms timestamp when it was last flushed. */
  readonly staleChains: ReadonlyMap<string, number>;
  /** Per service port key, what it contributed; replayed by partial syncs if unchanged. */
  readonly servicePorts: ReadonlyMap<string, ServicePortRecord>;
  /** The service port keys in the order they were written (see sortedKeys). */
  readonly sortedKeys: readonly string[];
}

export interface NFTablesSyncInput {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  /**
   * "ns/name" of Services whose Service or endpoints changed since the previous successful
   * sync. Undefined forces a full sync (start-up, after a failure, node label change).
   */
  readonly changedServices?: ReadonlySet<string>;
  /** Injected clock, ms. */
  readonly now: number;
  /**
   * On the first sync, what the kernel's table holds (left by an earlier run): per-service
   * chains and affinity sets are cleaned up, and the shared sets' and maps' elements are
   * diffed rather than rewritten. Without `elements` those containers are flushed and
   * refilled instead, which ends in the same table. Ignored when a previous state is given.
   */
  readonly existing?: {
    readonly chains: readonly string[];
    readonly sets: readonly string[];
    readonly elements?: ReadonlyMap<string, ElementContents>;
  };
}

export interface NFTablesSyncResult {
  /** Deletes chains stale for at least a second; run (and tolerate failure of) it first. */
  readonly cleanup: Transaction | null;
  readonly transaction: Transaction;
  /** The state once both transactions succeeded. After a failure pass no previous state. */
  readonly state: NFTablesState;
  readonly fullSync: boolean;
  /** Services whose Local policy found no local endpoint (sync_proxy_rules_no_local_endpoints_total). */
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
}

export function newTransaction(options: Pick<NFTablesOptions, "family">): Transaction {
  return new Transaction(ipX(options), KUBE_PROXY_TABLE);
}

export function renderNFTables(
  options: NFTablesOptions,
  input: NFTablesSyncInput,
  previous?: NFTablesState,
): NFTablesSyncResult {
  const fullSync = previous === undefined || input.changedServices === undefined;

  // Kernels before 6.2 notice only a little later that a chain lost its last map-element
  // reference, so stale chains are flushed first and deleted on a later sync.
  let cleanup: Transaction | null = null;
  const staleChains = new Map(previous?.staleChains);
  // Read, never copied: at 10k Services a copy per partial sync cost more than the change.
  const presentChains: ReadonlySet<string> =
    previous?.serviceChains ?? new Set(input.existing?.chains.filter(isServiceChainName));
  const deleted = new Set<string>();
  for (const [chain, since] of [...staleChains].sort(([a], [b]) => compareStrings(a, b))) {
    if (since > input.now - STALE_CHAIN_DELETE_DELAY_MS) continue;
    cleanup ??= newTransaction(options);
    cleanup.delete({ kind: "chain", name: chain });
    staleChains.delete(chain);
    deleted.add(chain);
  }

  const tx = newTransaction(options);
  if (fullSync) writeSkeleton(tx, options, previous === undefined);
  // Like kube-proxy, even a full sync only touches the elements that differ from what the
  // table holds, so unchanged services never blink out of the maps.
  const known = previous?.elements ?? input.existing?.elements;
  const stores = Object.fromEntries(
    CONTAINERS.map((c) => {
      const held = known?.get(c.name);
      if (held === undefined && fullSync) tx.flush({ kind: c.kind, name: c.name });
      return [c.name, new ElementStore(c.kind, c.name, held ?? new Map())];
    }),
  ) as Record<ContainerName, ElementStore>;

  const activeChains = new Set<string>();
  const activeAffinitySets = new Set<string>();
  const noLocalEndpoints = { internal: 0, external: 0 };
  const servicePorts = new Map<string, ServicePortRecord>();
  const replayCtx = { tx, stores, activeChains, activeAffinitySets };
  const keys = sortedKeys(input.services, previous?.sortedKeys);
  for (const key of keys) {
    const sp = input.services.get(key);
    if (!sp) continue;
    const svc = namespacedName(sp.name.namespace, sp.name.name);
    const skipChains = !fullSync && !(input.changedServices?.has(svc) ?? true);
    const held = skipChains ? previous?.servicePorts.get(key) : undefined;
    let record: ServicePortRecord;
    if (held) {
      replayServicePort(replayCtx, held);
      record = held;
    } else {
      const builder = newRecordBuilder();
      const outcome = writeServicePort(
        { tx, options, stores, activeChains, activeAffinitySets, skipChains, record: builder },
        sp,
        input.endpoints.get(key) ?? [],
      );
      record = { ...builder, ...outcome };
    }
    servicePorts.set(key, record);
    if (record.noLocalInternal) noLocalEndpoints.internal++;
    if (record.noLocalExternal) noLocalEndpoints.external++;
  }

  // Only the chains that went stale are sorted (for a stable transaction); sorting every
  // present chain made a partial sync cost as much as the cluster.
  const goneChains: string[] = [];
  for (const chain of presentChains) {
    if (deleted.has(chain)) continue;
    if (activeChains.has(chain)) staleChains.delete(chain);
    else goneChains.push(chain);
  }
  for (const chain of goneChains.sort(compareStrings)) {
    tx.flush({ kind: "chain", name: chain });
    staleChains.set(chain, input.now);
  }
  const presentSets = previous?.affinitySets ?? new Set(input.existing?.sets.filter(isAffinitySetName));
  for (const set of [...presentSets].sort(compareStrings)) {
    if (!activeAffinitySets.has(set)) tx.delete({ kind: "set", name: set });
  }
  for (const c of CONTAINERS) stores[c.name].deleteLeftovers(tx);

  return {
    cleanup,
    transaction: tx,
    fullSync,
    noLocalEndpoints,
    state: {
      elements: new Map(CONTAINERS.map((c) => [c.name, stores[c.name].contents])),
      // Stale chains are never active, so the active set (ours alone) can take them in place.
      serviceChains: addAll(activeChains, staleChains.keys()),
      affinitySets: activeAffinitySets,
      staleChains,
      servicePorts,
      sortedKeys: keys,
    },
  };
}

function addAll<T>(set: Set<T>, items: Iterable<T>): Set<T> {
  for (const item of items) set.add(item);
  return set;
}
