// One eBPF sync as a pure function: (cluster state, previous rendered state) in, ordered map writes and the next
// state out. Running the writes is the caller's job (a BPFMapStore).
//
// Each Service port claims its frontends and backends (claims.ts); a frontend or backend two ports claim takes
// the value of the port first in key order. A full sync renders every port; a partial one only the ports of
// changed Services. A port rendered again claims what it needs now and releases what it needed before and no
// longer does (port-claims.ts); a port whose Service and endpoints are the very objects it was rendered from is
// not rendered again. Either way only the frontends, backends and reverse NAT entries whose claims changed are
// compared with what the maps hold (held.ts, backends.ts, rev-nat.ts), and only entries that differ are written
// (delta.ts orders them). Backend ids and reverse NAT indexes stay with their keys from sync to sync (ids.ts),
// so an unchanged Service's entries never change.
//
// The state is carried from sync to sync and updated in place: a state passed to renderEBPF is used up, and
// only the returned one may be passed to the next sync. After a failed write (or a render that threw) pass none:
// the next sync is full and diffs against the live entries (`existing`), as a restart's first sync does: what
// is live keeps its backend ids and reverse NAT indexes, and only what differs is written.

import { formatIP, type IPFamily, parseIP } from "@switchyard/basics";
import { type ChangedPortsInput, changedPortKeys } from "../model/changed-ports.js";
import type { EndpointInfo } from "../model/endpoint.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";
import type { ServicePortInfo } from "../model/service-port.js";
import { sortedKeys } from "../util/sorted-keys.js";
import { type BackendEntry, Backends } from "./backends.js";
import { type ClaimEntry, Claims } from "./claims.js";
import type { MapContents } from "./contents.js";
import { StepPlan } from "./delta.js";
import { HeldMaps } from "./held.js";
import type { MapName } from "./layout.js";
import type { MapWriteStep } from "./map-store.js";
import type { EBPFOptions } from "./options.js";
import { reclaimPort, releasePort } from "./port-claims.js";
import { RevNats } from "./rev-nat.js";
import { type FrontendWant, sameFrontend, samePlanOptions } from "./service-plan.js";
import { SourceRanges } from "./source-ranges.js";
import { writeFrontends } from "./write.js";

export type { EBPFOptions } from "./options.js";

/** What a sync hands the next one, beyond what EBPFState shows. */
export interface Carried {
  /** Set once a later sync has taken this state over. */
  used: boolean;
  readonly family: IPFamily;
  /** Per service port key, the frontends and backends it claims and its no-local-endpoint outcome. */
  readonly ports: Map<string, PortRecord>;
  /** The service port keys of the last full sync, sorted: the next one sorts again only if they changed. */
  sortedPorts: readonly string[];
  /** "ns/name" → its service port keys rendered last. */
  readonly portsOfService: Map<string, string[]>;
  /** The options the newest port records were planned with (one object while they stay the same). */
  planOptions: EBPFOptions | undefined;
  /** Frontend claims, by frontend name (write.ts writes the changed ones). */
  readonly frontends: Claims<FrontendWant>;
  readonly backends: Backends;
  readonly revNat: RevNats;
  /** The services map's entries. */
  readonly held: HeldMaps;
  /** The source range map's entries, by reverse NAT index. */
  readonly sourceRanges: SourceRanges;
  /** Service ports whose Local policy found no local endpoint. */
  readonly noLocal: { internal: number; external: number };
}

export interface PortRecord {
  /** What the port was planned from: the same objects again plan the same (see reclaimPort). */
  readonly sp: ServicePortInfo;
  readonly endpoints: readonly EndpointInfo[] | undefined;
  readonly options: EBPFOptions;
  readonly frontends: readonly string[];
  /** In the order of the plan's backends (ScopeWant.backendIndexes count in it). */
  readonly backends: readonly BackendEntry[];
  readonly noLocalInternal: boolean;
  readonly noLocalExternal: boolean;
}

const CARRIED = Symbol("carried");

/** What the maps hold after a successful sync, and the numbering the next sync keeps. */
export interface EBPFState {
  readonly family: IPFamily;
  /** Backend name ("10.180.0.1:80/TCP") → backend id (built when read). */
  readonly backendIds: ReadonlyMap<string, number>;
  /** Frontend address:port → reverse NAT index (built when read). */
  readonly revNatIndexes: ReadonlyMap<string, number>;
  /** The three maps' contents, decoded (built when read: it costs one pass over every entry). */
  readonly contents: MapContents;
  readonly [CARRIED]: Carried;
}

export interface EBPFSyncInput extends ChangedPortsInput {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  /**
   * "ns/name" of Services whose Service or endpoints changed since the previous successful sync. Undefined
   * forces a full sync (start-up, after a failure, node label change).
   */
  readonly changedServices?: ReadonlySet<string>;
  /** Live entries per proxy-owned map when there is no previous state (first sync, or after a failure). */
  readonly existing?: Partial<Record<MapName, readonly (readonly [key: Buffer, value: Buffer])[]>>;
}

export interface EBPFSyncResult {
  readonly state: EBPFState;
  /** The writes, in the order they must run (see delta.ts); empty when nothing changed. */
  readonly steps: MapWriteStep[];
  readonly fullSync: boolean;
  /** Service ports whose Local policy found no local endpoint (sync_proxy_rules_no_local_endpoints_total). */
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
  /** Entries per proxy-owned map after this sync. */
  readonly sizes: Readonly<Record<"services" | "backends" | "revNat" | "sourceRange", number>>;
}

export function renderEBPF(options: EBPFOptions, input: EBPFSyncInput, previous?: EBPFState): EBPFSyncResult {
  if (previous?.[CARRIED].used) {
    throw new Error("renderEBPF: this state was already used by a later sync; pass the newest state");
  }
  if (previous && previous.family !== options.family) {
    throw new Error(`renderEBPF: the previous state is ${previous.family}, this sync ${options.family}`);
  }
  const fullSync = previous === undefined || input.changedServices === undefined;
  const c = previous ? takeOver(previous[CARRIED]) : newCarried(options.family, input.existing);
  const opts = planOptions(c, options);

  if (fullSync) {
    for (const port of [...c.ports.keys()]) if (!input.services.has(port)) releasePort(c, port);
    c.sortedPorts = sortedKeys(input.services, c.sortedPorts);
    for (const port of c.sortedPorts) reclaimPort(c, opts, input, port);
  } else {
    for (const port of changedPortKeys(c.portsOfService, input)) reclaimPort(c, opts, input, port);
  }
  const plan = new StepPlan(options.family);
  c.backends.write(plan);
  writeFrontends(c, plan, previous === undefined);
  return {
    state: stateOf(c),
    steps: plan.steps(),
    fullSync,
    noLocalEndpoints: { ...c.noLocal },
    sizes: {
      services: c.held.serviceCount,
      backends: c.backends.size,
      revNat: c.revNat.size,
      sourceRange: c.sourceRanges.size,
    },
  };
}

/** A first sync's state: what is live (`existing`), for this sync to keep where it still wants it, else delete. */
function newCarried(family: IPFamily, existing: EBPFSyncInput["existing"]): Carried {
  return {
    used: false,
    family,
    ports: new Map(),
    sortedPorts: [],
    portsOfService: new Map(),
    planOptions: undefined,
    frontends: new Claims(
      sameFrontend,
      (key): ClaimEntry<FrontendWant> => ({ key, first: undefined, dirty: false }),
    ),
    backends: existing?.backends ? Backends.fromExisting(family, existing.backends) : new Backends(),
    revNat: existing?.revNat ? RevNats.fromExisting(family, existing.revNat) : new RevNats(),
    held: existing ? HeldMaps.fromExisting(family, existing) : new HeldMaps(),
    sourceRanges: existing?.sourceRange
      ? SourceRanges.fromExisting(
          family,
          existing.sourceRange.map(([key]) => key),
        )
      : new SourceRanges(),
    noLocal: { internal: 0, external: 0 },
  };
}

/** The previous sync's state, carried on: the numbers it gave up (and deleted) are free again. */
function takeOver(previous: Carried): Carried {
  previous.used = true;
  previous.backends.startSync();
  previous.revNat.startSync();
  return { ...previous, used: false };
}

function stateOf(c: Carried): EBPFState {
  return {
    family: c.family,
    get backendIds() {
      return c.backends.ids();
    },
    get revNatIndexes() {
      return c.revNat.indexes();
    },
    get contents() {
      const held = c.held.contents(c.family, c.backends.contents(), c.revNat.contents());
      return { ...held, sourceRanges: c.sourceRanges.contents() };
    },
    [CARRIED]: c,
  };
}

/**
 * The options ports are planned with, NodePort addresses in canonical text: the previous sync's object when
 * they are the same, so that a port record planned with them shows it.
 */
function planOptions(c: Carried, options: EBPFOptions): EBPFOptions {
  const opts = { ...options, nodePortIPs: canonicalIPs(options.nodePortIPs, options.family) };
  if (!c.planOptions || !samePlanOptions(c.planOptions, opts)) c.planOptions = opts;
  return c.planOptions;
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
