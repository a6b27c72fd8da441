// What the Proxier needs from a data plane: turn the current maps into kernel rules, full or
// partial. A backend keeps its own rendered state and forgets it when a sync fails, so the
// next sync re-reads the kernel and rewrites everything.

import type { IPFamily } from "@switchyard/basics";
import type { StructuredLogger } from "@switchyard/kube";
import type { ProxyMode } from "../apply/cleanup.js";
import type { EndpointsMap } from "../model/endpoints-change-tracker.js";
import type { ServicePortMap } from "../model/service-change-tracker.js";

export interface BackendSyncInput {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
  /** "ns/name" of Services changed since the last successful sync; undefined asks for a full sync. */
  readonly changedServices?: ReadonlySet<string>;
  /** With changedServices: the port keys the changed Service objects had or have (ServiceUpdateResult.updatedPorts). */
  readonly changedServicePorts?: ReadonlySet<string>;
  /** Injected clock, ms. */
  readonly now: number;
}

/** The maps a successful sync programmed. */
export interface ProgrammedMaps {
  readonly services: ServicePortMap;
  readonly endpoints: EndpointsMap;
}

export interface BackendSyncResult {
  /** Whether the rules were rewritten as a whole (the backend may upgrade a partial request). */
  readonly fullSync: boolean;
  readonly noLocalEndpoints: { readonly internal: number; readonly external: number };
}

export interface ProxyBackend {
  readonly mode: ProxyMode;
  readonly family: IPFamily;
  /** Writes the rules; throws (changing nothing it can avoid changing) when the kernel refuses. */
  sync(input: BackendSyncInput): Promise<BackendSyncResult>;
  /** The node's topology labels changed; the next sync is full anyway (see FullSyncPolicy). */
  setNodeLabels(labels: Readonly<Record<string, string>>): void;
  /**
   * This family's ServiceCIDRs changed (sorted). Only backends that use them implement it;
   * it returns whether the rules must change, and the next sync is then full.
   */
  setServiceCIDRs?(cidrs: readonly string[]): boolean;
  /**
   * After a successful sync, given what the previous successful sync programmed and what this one did: ends the
   * flows that still go along paths the sync removed where no conntrack entry exists to delete (ebpf mode's
   * connected UDP sockets). Only backends that balance without NAT implement it; the Proxier logs a rejection and
   * the sync stays successful.
   */
  endStaleFlows?(before: ProgrammedMaps, after: ProgrammedMaps): Promise<void>;
}

/** The proxier logs through @switchyard/kube's interface: its Logger, or a test's recording object. */
export type ProxierLogger = StructuredLogger;

export const silentLogger: ProxierLogger = { info() {}, warn() {}, error() {} };
