// Accumulates Service changes between syncs so a sync only looks at what moved.

import type { IPFamily } from "@switchyard/basics";
import type { Service } from "kubernetes-types/core/v1.js";
import { deepEqual } from "../util/deep-equal.js";
import { SnapshotMap } from "../util/snapshot-map.js";
import { type ServicePortInfo, servicePortsFromService } from "./service-port.js";
import { namespacedName, servicePortKey } from "./service-port-name.js";

/** Service ports by servicePortKey. */
export type ServicePortMap = ReadonlyMap<string, ServicePortInfo>;

interface PendingChange {
  previous: Map<string, ServicePortInfo>;
  current: Map<string, ServicePortInfo>;
}

export interface ServiceUpdateResult {
  /** The complete, new service port map (a new version; earlier results are untouched). */
  readonly services: ServicePortMap;
  /** "ns/name" of every Service whose ports changed since the previous update(). */
  readonly updatedServices: ReadonlySet<string>;
  /** The port keys those Services had before this update or have after it (a partial sync renders these). */
  readonly updatedPorts: ReadonlySet<string>;
  /** Warnings for skipped fields, by "ns/name", from the Services applied in this update. */
  readonly warnings: ReadonlyMap<string, readonly string[]>;
}

export class ServiceChangeTracker {
  readonly #family: IPFamily;
  readonly #pending = new Map<string, PendingChange>();
  readonly #warnings = new Map<string, string[]>();
  /** Services whose warnings are not reported yet; a Service with no usable port has no pending change. */
  readonly #unreported = new Set<string>();
  #services = SnapshotMap.empty<string, ServicePortInfo>();

  constructor(family: IPFamily) {
    this.#family = family;
  }

  #portsOf(svc: Service | undefined): Map<string, ServicePortInfo> {
    const out = new Map<string, ServicePortInfo>();
    if (!svc) return out;
    const { ports, warnings } = servicePortsFromService(svc, this.#family);
    const name = namespacedName(svc.metadata?.namespace ?? "", svc.metadata?.name ?? "");
    if (warnings.length > 0) {
      this.#warnings.set(name, warnings);
      this.#unreported.add(name);
    } else this.#warnings.delete(name);
    for (const p of ports) out.set(servicePortKey(p.name), p);
    return out;
  }

  /**
   * Records an add (previous undefined), update, or delete (current undefined). Returns
   * true when any change is pending, i.e. a sync is needed. A change that undoes an earlier
   * pending one cancels it, so a flapping Service costs no sync.
   */
  update(previous: Service | undefined, current: Service | undefined): boolean {
    const obj = current ?? previous;
    if (!obj) return this.#pending.size > 0;
    const name = namespacedName(obj.metadata?.namespace ?? "", obj.metadata?.name ?? "");
    const existing = this.#pending.get(name);
    const change: PendingChange = existing ?? { previous: this.#portsOf(previous), current: new Map() };
    change.current = this.#portsOf(current);
    if (deepEqual(change.previous, change.current)) this.#pending.delete(name);
    else this.#pending.set(name, change);
    return this.#pending.size > 0;
  }

  /** Number of Services with pending changes (for the *_changes_pending metric). */
  pendingCount(): number {
    return this.#pending.size;
  }

  /** Applies the pending changes and reports which Services changed. */
  apply(): ServiceUpdateResult {
    const edits: Array<[string, ServicePortInfo | undefined]> = [];
    const updatedServices = new Set<string>();
    const updatedPorts = new Set<string>();
    const warnings = new Map<string, readonly string[]>();
    for (const [name, change] of this.#pending) {
      updatedServices.add(name);
      for (const key of change.previous.keys()) {
        edits.push([key, undefined]);
        updatedPorts.add(key);
      }
      for (const entry of change.current) {
        edits.push(entry);
        updatedPorts.add(entry[0]);
      }
    }
    for (const name of new Set([...this.#pending.keys(), ...this.#unreported])) {
      const w = this.#warnings.get(name);
      if (w) warnings.set(name, w);
    }
    this.#pending.clear();
    this.#unreported.clear();
    this.#services = this.#services.with(edits);
    return { services: this.#services, updatedServices, updatedPorts, warnings };
  }
}
