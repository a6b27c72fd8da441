// One nftables sync as a pure function: (cluster state, previous rendered state) in,
// transactions and the next state out. Running the transactions is the caller's job.
//
// A full sync writes every Service port. A partial sync writes only the ports of changed Services:
// it takes back what their previous render contributed (its ServicePortRecord: element claims, chain
// and affinity set references) and writes them anew, and the shared sets and maps then change only
// where a claim changed. Unchanged Services are not visited, so a partial sync costs what changed.
// The state is carried from sync to sync and updated in place: a state passed to renderNFTables is
// used up, and only the returned one may be passed to the next sync.

import { type ChangedPortsInput, changedPortKeys } from "../model/changed-ports.js";
import { compareStrings } from "../model/endpoint.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { serviceOfPortKey } from "../model/service-port-name.js";
import { sortedKeys } from "../util/sorted-keys.js";
import { ContainerElements, type ElementContents } from "./element-store.js";
import { isAffinitySetName, isServiceChainName, KUBE_PROXY_TABLE } from "./names.js";
import { ipX, type NFTablesOptions } from "./options.js";
import { newRecordBuilder, type ServicePortRecord } from "./service-record.js";
import { writeServicePort } from "./service-rules.js";
import { CONTAINERS, type ContainerName, writeSkeleton } from "./skeleton.js";
import { Transaction } from "./transaction.js";

/** How long a flushed per-service chain waits before it is deleted (see renderNFTables). */
export const STALE_CHAIN_DELETE_DELAY_MS = 1000;

/** What a sync hands the next one, beyond what NFTablesState shows. */
interface Carried {
  /** Set once a later sync has taken this state over. */
  used: boolean;
  readonly stores: Record<ContainerName, ContainerElements>;
  /** Per-service chain → how many Service ports' records name it. */
  readonly chainRefs: Map<string, number>;
  readonly affinityRefs: Map<string, number>;
  /** "ns/name" → its service port keys rendered last. */
  readonly portsOfService: Map<string, Set<string>>;
  readonly noLocalEndpoints: { internal: number; external: number };
}

const CARRIED = Symbol("carried");

/** What the table holds after a successful sync; the input of the next one. */
export interface NFTablesState {
  readonly elements: ReadonlyMap<string, ElementContents>;
  /** Per-service chains present in the table (active and stale). */
  readonly serviceChains: ReadonlySet<string>;
  readonly affinitySets: ReadonlySet<string>;
  /** Stale chain → ms timestamp when it was last flushed. */
  readonly staleChains: ReadonlyMap<string, number>;
  /** Per service port key, what it contributed; a partial sync takes it back when the port changes. */
  readonly servicePorts: ReadonlyMap<string, ServicePortRecord>;
  /** The service port keys in the order the last full sync wrote them (see sortedKeys). */
  readonly sortedKeys: readonly string[];
  readonly [CARRIED]: Carried;
}

export interface NFTablesSyncInput extends ChangedPortsInput {
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

/** The mutable parts of a state being built: taken over from the previous one or new. */
interface Working {
  readonly tx: Transaction;
  readonly carried: Carried;
  readonly present: Set<string>;
  readonly presentSets: Set<string>;
  readonly staleChains: Map<string, number>;
  readonly servicePorts: Map<string, ServicePortRecord>;
  /** Chains and affinity sets the released records named (a partial sync looks only at these). */
  readonly releasedChains: string[];
  readonly releasedSets: string[];
}

export function renderNFTables(
  options: NFTablesOptions,
  input: NFTablesSyncInput,
  previous?: NFTablesState,
): NFTablesSyncResult {
  if (previous?.[CARRIED].used) {
    throw new Error("renderNFTables: this state was already used by a later sync; pass the newest state");
  }
  if (previous) previous[CARRIED].used = true;
  const fullSync = previous === undefined || input.changedServices === undefined;
  // Kernels before 6.2 notice only a little later that a chain lost its last map-element
  // reference, so stale chains are flushed first and deleted on a later sync.
  const staleChains = new Map(previous?.staleChains);
  const present =
    (previous?.serviceChains as Set<string> | undefined) ??
    new Set(input.existing?.chains.filter(isServiceChainName));
  const cleanup = deleteStaleChains(options, staleChains, present, input.now);

  const tx = newTransaction(options);
  let w: Working;
  let keys: readonly string[];
  if (fullSync) {
    writeSkeleton(tx, options, previous === undefined);
    keys = sortedKeys(input.services, previous?.sortedKeys);
    w = newWorking(tx, previous, input, present, staleChains);
    writePorts(w, options, input, keys);
  } else {
    keys = previous.sortedKeys;
    w = takeOver(tx, previous, present, staleChains);
    const changed = changedPortKeys(w.carried.portsOfService, input);
    releasePorts(w, changed);
    writePorts(w, options, input, changed);
  }
  for (const c of CONTAINERS) w.carried.stores[c.name].write(tx, fullSync);
  settleChains(w, input.now, fullSync);
  settleAffinitySets(w, fullSync);

  const noLocalEndpoints = { ...w.carried.noLocalEndpoints };
  return {
    cleanup,
    transaction: tx,
    fullSync,
    noLocalEndpoints,
    state: {
      elements: new Map(CONTAINERS.map((c) => [c.name, w.carried.stores[c.name].contents])),
      serviceChains: w.present,
      affinitySets: w.presentSets,
      staleChains: w.staleChains,
      servicePorts: w.servicePorts,
      sortedKeys: keys,
      [CARRIED]: w.carried,
    },
  };
}

/** The cleanup transaction: chains stale for at least STALE_CHAIN_DELETE_DELAY_MS, deleted. */
function deleteStaleChains(
  options: NFTablesOptions,
  staleChains: Map<string, number>,
  present: Set<string>,
  now: number,
): Transaction | null {
  let cleanup: Transaction | null = null;
  for (const [chain, since] of [...staleChains].sort(([a], [b]) => compareStrings(a, b))) {
    if (since > now - STALE_CHAIN_DELETE_DELAY_MS) continue;
    cleanup ??= newTransaction(options);
    cleanup.delete({ kind: "chain", name: chain });
    staleChains.delete(chain);
    present.delete(chain);
  }
  return cleanup;
}

/** A full sync's starting point: the table's known elements (or flushed containers), no claims. */
function newWorking(
  tx: Transaction,
  previous: NFTablesState | undefined,
  input: NFTablesSyncInput,
  present: Set<string>,
  staleChains: Map<string, number>,
): Working {
  const stores = {} as Record<ContainerName, ContainerElements>;
  for (const c of CONTAINERS) {
    // Like kube-proxy, even a full sync only touches the elements that differ from what the
    // table holds, so unchanged services never blink out of the maps.
    let held = previous?.[CARRIED].stores[c.name].contents as Map<string, string> | undefined;
    if (!held && input.existing?.elements?.has(c.name)) held = new Map(input.existing.elements.get(c.name));
    if (!held) tx.flush({ kind: c.kind, name: c.name });
    stores[c.name] = new ContainerElements(c.kind, c.name, held ?? new Map());
  }
  const presentSets =
    (previous?.affinitySets as Set<string> | undefined) ??
    new Set(input.existing?.sets.filter(isAffinitySetName));
  return {
    tx,
    present,
    presentSets,
    staleChains,
    servicePorts: new Map(),
    releasedChains: [],
    releasedSets: [],
    carried: {
      used: false,
      stores,
      chainRefs: new Map(),
      affinityRefs: new Map(),
      portsOfService: new Map(),
      noLocalEndpoints: { internal: 0, external: 0 },
    },
  };
}

/** A partial sync's starting point: everything the previous sync carried, updated in place. */
function takeOver(
  tx: Transaction,
  previous: NFTablesState,
  present: Set<string>,
  staleChains: Map<string, number>,
): Working {
  const carried = previous[CARRIED];
  return {
    tx,
    present,
    presentSets: previous.affinitySets as Set<string>,
    staleChains,
    servicePorts: previous.servicePorts as Map<string, ServicePortRecord>,
    releasedChains: [],
    releasedSets: [],
    carried: { ...carried, used: false },
  };
}

/** Takes back what the changed ports contributed last time. */
function releasePorts(w: Working, ports: readonly string[]): void {
  const c = w.carried;
  for (const port of ports) {
    const record = w.servicePorts.get(port);
    if (!record) continue;
    w.servicePorts.delete(port);
    const svc = serviceOfPortKey(port);
    c.portsOfService.get(svc)?.delete(port);
    if (c.portsOfService.get(svc)?.size === 0) c.portsOfService.delete(svc);
    for (const { container, element } of record.elements) c.stores[container].release(port, element.k);
    for (const chain of record.chains) count(c.chainRefs, chain, -1);
    for (const set of record.affinitySets) count(c.affinityRefs, set, -1);
    w.releasedChains.push(...record.chains);
    w.releasedSets.push(...record.affinitySets);
    if (record.noLocalInternal) c.noLocalEndpoints.internal--;
    if (record.noLocalExternal) c.noLocalEndpoints.external--;
  }
}

/** Writes the ports (in this order) that exist, claiming their elements and chains. */
function writePorts(
  w: Working,
  options: NFTablesOptions,
  input: NFTablesSyncInput,
  ports: readonly string[],
): void {
  const c = w.carried;
  const written = new Set<string>();
  for (const port of ports) {
    const sp = input.services.get(port);
    if (!sp) continue;
    const record = newRecordBuilder();
    const outcome = writeServicePort(
      { tx: w.tx, options, stores: c.stores, port, written, record },
      sp,
      input.endpoints.get(port) ?? [],
    );
    w.servicePorts.set(port, { ...record, ...outcome });
    const svc = serviceOfPortKey(port);
    const set = c.portsOfService.get(svc);
    if (set) set.add(port);
    else c.portsOfService.set(svc, new Set([port]));
    for (const chain of record.chains) {
      count(c.chainRefs, chain, 1);
      w.present.add(chain);
    }
    for (const s of record.affinitySets) {
      count(c.affinityRefs, s, 1);
      w.presentSets.add(s);
    }
    if (outcome.noLocalInternal) c.noLocalEndpoints.internal++;
    if (outcome.noLocalExternal) c.noLocalEndpoints.external++;
  }
}

function count(refs: Map<string, number>, name: string, by: number): void {
  const n = (refs.get(name) ?? 0) + by;
  if (n > 0) refs.set(name, n);
  else refs.delete(name);
}

/**
 * Chains no Service port names any more are flushed and stamped stale; like kube-proxy, every
 * sync re-flushes and re-stamps the chains still stale, and a chain in use again stops being stale.
 */
function settleChains(w: Working, now: number, fullSync: boolean): void {
  const refs = w.carried.chainRefs;
  const gone: string[] = [];
  // A full sync looks at every present chain; a partial one at the stale ones and those it released.
  const candidates = fullSync ? w.present : new Set([...w.staleChains.keys(), ...w.releasedChains]);
  for (const chain of candidates) {
    if (!w.present.has(chain)) continue;
    if (refs.has(chain)) w.staleChains.delete(chain);
    else gone.push(chain);
  }
  // Only the chains that went stale are sorted (for a stable transaction).
  for (const chain of gone.sort(compareStrings)) {
    w.tx.flush({ kind: "chain", name: chain });
    w.staleChains.set(chain, now);
  }
}

/** Affinity sets no Service port names any more are deleted at once. */
function settleAffinitySets(w: Working, fullSync: boolean): void {
  const refs = w.carried.affinityRefs;
  const candidates = fullSync ? [...w.presentSets] : w.releasedSets;
  const gone = candidates.filter((s) => w.presentSets.has(s) && !refs.has(s));
  for (const set of [...new Set(gone)].sort(compareStrings)) {
    w.tx.delete({ kind: "set", name: set });
    w.presentSets.delete(set);
  }
}
