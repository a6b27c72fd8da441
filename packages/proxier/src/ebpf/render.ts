// One eBPF sync as a pure function: (cluster state, previous rendered state) in, ordered map writes and the next
// state out. Running the writes is the caller's job (a BPFMapStore).
//
// Each Service port claims its frontends and backends (claims.ts); a frontend or backend two ports claim takes
// the value of the port first in key order. A full sync renders every port; a partial one only the ports of
// changed Services, after taking back what they claimed last time. Either way only the frontends, backends and
// reverse NAT entries whose claims changed are compared with what the maps hold (held.ts), and only entries
// that differ are written (delta.ts orders them). Backend ids and reverse NAT indexes stay with their keys
// from sync to sync (ids.ts), so an unchanged Service's entries never change.
//
// The state is carried from sync to sync and updated in place: a state passed to renderEBPF is used up, and
// only the returned one may be passed to the next sync. After a failed write (or a render that threw) pass none:
// the next sync is full and diffs against the live keys (`existing`).

import { formatIP, type IPFamily, parseIP } from "@switchyard/basics";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import { sortedKeys } from "../util/sorted-keys.js";
import { Claims } from "./claims.js";
import type { MapContents } from "./contents.js";
import { StepPlan } from "./delta.js";
import { HeldMaps } from "./held.js";
import { IdAllocator } from "./ids.js";
import type { MapName } from "./layout.js";
import type { MapWriteStep } from "./map-store.js";
import type { EBPFOptions } from "./options.js";
import { changedPorts, claimPort, releasePort } from "./port-claims.js";
import type { BackendWant, FrontendWant } from "./service-plan.js";
import { writeBackends, writeFrontends } from "./write.js";

export type { EBPFOptions } from "./options.js";

/** What a sync hands the next one, beyond what EBPFState shows. */
export interface Carried {
  /** Set once a later sync has taken this state over. */
  used: boolean;
  readonly family: IPFamily;
  /** Per service port key, the frontends and backends it claims and its no-local-endpoint outcome. */
  readonly ports: Map<string, PortRecord>;
  /** "ns/name" → its service port keys rendered last. */
  readonly portsOfService: Map<string, Set<string>>;
  readonly frontends: Claims<FrontendWant>;
  readonly backends: Claims<BackendWant>;
  readonly backendIds: IdAllocator;
  /** By reverse NAT key (frontend address:port). */
  readonly revNatIndexes: IdAllocator;
  /** Reverse NAT key → the frontends (names) present that use it, and the entry it needs. */
  readonly revNatUsers: Map<string, RevNatUse>;
  readonly held: HeldMaps;
  /** Service ports whose Local policy found no local endpoint. */
  readonly noLocal: { internal: number; external: number };
}

export interface PortRecord {
  readonly frontends: readonly string[];
  readonly backends: readonly string[];
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

export interface RevNatUse {
  readonly address: string;
  readonly port: number;
  readonly frontends: Set<string>;
}

const CARRIED = Symbol("carried");

/** What the maps hold after a successful sync, and the numbering the next sync keeps. */
export interface EBPFState {
  readonly family: IPFamily;
  /** Backend name ("10.180.0.1:80/TCP") → backend id. */
  readonly backendIds: ReadonlyMap<string, number>;
  /** Frontend address:port → reverse NAT index. */
  readonly revNatIndexes: ReadonlyMap<string, number>;
  /** The three maps' contents, decoded (built when read: it costs one pass over every entry). */
  readonly contents: MapContents;
  readonly [CARRIED]: Carried;
}

export interface EBPFSyncInput {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  /**
   * "ns/name" of Services whose Service or endpoints changed since the previous successful sync. Undefined
   * forces a full sync (start-up, after a failure, node label change).
   */
  readonly changedServices?: ReadonlySet<string>;
  /** Live keys per proxy-owned map when there is no previous state (first sync, or after a failure). */
  readonly existing?: Partial<Record<MapName, readonly Buffer[]>>;
}

export interface EBPFSyncResult {
  readonly state: EBPFState;
  /** The writes, in the order they must run (see delta.ts); empty when nothing changed. */
  readonly steps: MapWriteStep[];
  readonly fullSync: boolean;
  /** Service ports whose Local policy found no local endpoint (sync_proxy_rules_no_local_endpoints_total). */
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
  /** Entries per proxy-owned map after this sync. */
  readonly sizes: Readonly<Record<"services" | "backends" | "revNat", number>>;
}

/** Backend ids are u32 in the maps; reverse NAT indexes u16. 0 means none in both. */
const MAX_BACKEND_ID = 0xffffffff;
const MAX_REV_NAT_INDEX = 0xffff;

export function renderEBPF(options: EBPFOptions, input: EBPFSyncInput, previous?: EBPFState): EBPFSyncResult {
  if (previous?.[CARRIED].used) {
    throw new Error("renderEBPF: this state was already used by a later sync; pass the newest state");
  }
  if (previous && previous.family !== options.family) {
    throw new Error(`renderEBPF: the previous state is ${previous.family}, this sync ${options.family}`);
  }
  const opts = { ...options, nodePortIPs: canonicalIPs(options.nodePortIPs, options.family) };
  const fullSync = previous === undefined || input.changedServices === undefined;
  const c = previous ? takeOver(previous[CARRIED]) : newCarried(options.family, input.existing);

  if (fullSync) {
    for (const port of [...c.ports.keys()]) releasePort(c, port);
    for (const port of sortedKeys(input.services)) claimPort(c, opts, input, port);
  } else {
    const ports = changedPorts(c, input);
    for (const port of ports) releasePort(c, port);
    for (const port of ports) claimPort(c, opts, input, port);
  }
  const plan = new StepPlan(options.family);
  writeBackends(c, plan, fullSync);
  writeFrontends(c, plan, fullSync);
  return {
    state: stateOf(c),
    steps: plan.steps(),
    fullSync,
    noLocalEndpoints: { ...c.noLocal },
    sizes: { services: c.held.serviceCount, backends: c.held.backends.size, revNat: c.held.revNat.size },
  };
}

function newCarried(family: IPFamily, existing: EBPFSyncInput["existing"]): Carried {
  const held = existing ? HeldMaps.fromExisting(family, existing) : new HeldMaps();
  const backendIds = new IdAllocator("backend ids", MAX_BACKEND_ID);
  const revNatIndexes = new IdAllocator(
    "reverse NAT indexes (one per frontend address and port)",
    MAX_REV_NAT_INDEX,
  );
  // Live numbers of unknown meaning: this full sync deletes them, so none is handed out before that.
  backendIds.reserve(held.backends.keys());
  revNatIndexes.reserve(held.revNat.keys());
  return {
    used: false,
    family,
    ports: new Map(),
    portsOfService: new Map(),
    frontends: new Claims(),
    backends: new Claims(),
    backendIds,
    revNatIndexes,
    revNatUsers: new Map(),
    held,
    noLocal: { internal: 0, external: 0 },
  };
}

/** The previous sync's state, carried on: the numbers it gave up (and deleted) are free again. */
function takeOver(previous: Carried): Carried {
  previous.used = true;
  previous.backendIds.startSync();
  previous.revNatIndexes.startSync();
  return { ...previous, used: false };
}

function stateOf(c: Carried): EBPFState {
  return {
    family: c.family,
    backendIds: c.backendIds.ids,
    revNatIndexes: c.revNatIndexes.ids,
    get contents() {
      return c.held.contents(c.family);
    },
    [CARRIED]: c,
  };
}

/** NodePort addresses in canonical text (as frontends are named); one of another family is a caller's bug. */
function canonicalIPs(ips: readonly string[], family: IPFamily): string[] {
  return ips.map((text) => {
    const ip = parseIP(text);
    if (ip?.family !== family)
      throw new Error(`renderEBPF: NodePort address ${text} is not an ${family} address`);
    return formatIP(ip);
  });
}
