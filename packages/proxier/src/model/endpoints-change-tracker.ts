// Accumulates EndpointSlice changes between syncs, per Service, and the trigger times that
// feed the network-programming latency metric.

import type { IPFamily } from "@switchyard/basics";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import { deepEqual } from "../util/deep-equal.js";
import { SnapshotMap } from "../util/snapshot-map.js";
import { type EndpointInfo, type EndpointsByPort, endpointsFromSlices } from "./endpoint.js";
import { namespacedName, serviceOfPortKey } from "./service-port-name.js";

export const SERVICE_NAME_LABEL = "kubernetes.io/service-name";
export const LAST_CHANGE_TRIGGER_TIME_ANNOTATION = "endpoints.kubernetes.io/last-change-trigger-time";

/** Endpoints by servicePortKey. */
export type EndpointsMap = ReadonlyMap<string, readonly EndpointInfo[]>;

export interface EndpointsUpdateResult {
  readonly endpoints: EndpointsMap;
  /** "ns/name" of every Service whose endpoints changed since the previous apply(). */
  readonly updatedServices: ReadonlySet<string>;
  /** Trigger times of the applied changes, by "ns/name", for network_programming_duration_seconds. */
  readonly lastChangeTriggerTimes: ReadonlyMap<string, readonly Date[]>;
  /**
   * A changed Service had or has a UDP port with endpoints, so stale UDP conntrack entries
   * may exist (upstream's ConntrackCleanupRequired); saves listing the table on other syncs.
   */
  readonly conntrackCleanupRequired: boolean;
}

export interface EndpointsChangeTrackerOptions {
  readonly family: IPFamily;
  readonly nodeName: string;
  /** Injected clock; trigger times from before the tracker started are not reported. */
  readonly now?: () => Date;
}

type SlicesByName = Map<string, EndpointSlice>;

export class EndpointsChangeTracker {
  readonly #family: IPFamily;
  readonly #nodeName: string;
  readonly #startTime: Date;
  /** Slices already applied, by Service. */
  readonly #applied = new Map<string, SlicesByName>();
  /** Slices as they will be after the next apply(), for Services with pending changes. */
  readonly #pending = new Map<string, SlicesByName>();
  /** The endpoints of #pending's slices, as update() found them: apply() takes them without a second pass. */
  readonly #pendingEndpoints = new Map<string, EndpointsByPort>();
  readonly #triggerTimes = new Map<string, Date[]>();
  #endpoints = SnapshotMap.empty<string, readonly EndpointInfo[]>();
  /** The port keys each Service has in #endpoints, so apply() touches only changed Services' keys. */
  readonly #portKeys = new Map<string, readonly string[]>();

  constructor(options: EndpointsChangeTrackerOptions) {
    this.#family = options.family;
    this.#nodeName = options.nodeName;
    this.#startTime = (options.now ?? (() => new Date()))();
  }

  #compute(ns: string, name: string, slices: SlicesByName | undefined): EndpointsByPort {
    return endpointsFromSlices(ns, name, [...(slices?.values() ?? [])], this.#family, this.#nodeName);
  }

  /**
   * Records a slice add/update (removed false) or delete. Slices of another address type and
   * slices without a service-name label are ignored. Returns true when this Service now has
   * a pending change, i.e. a sync is needed.
   */
  endpointSliceUpdate(slice: EndpointSlice, removed: boolean): boolean {
    const ns = slice.metadata?.namespace ?? "";
    const svc = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    const sliceName = slice.metadata?.name ?? "";
    if (!svc || slice.addressType !== this.#family) return false;
    const key = namespacedName(ns, svc);
    const next = new Map(this.#pending.get(key) ?? this.#applied.get(key));
    if (removed) next.delete(sliceName);
    else next.set(sliceName, slice);

    const before = this.#compute(ns, svc, this.#applied.get(key));
    const after = this.#compute(ns, svc, next);
    if (deepEqual(before, after)) {
      // Nothing visible changed (or an earlier change was undone); still remember the
      // slice so a later apply() stores the newest object.
      this.#pending.delete(key);
      this.#pendingEndpoints.delete(key);
      this.#applied.set(key, next);
      this.#triggerTimes.delete(key);
      return false;
    }
    this.#pending.set(key, next);
    this.#pendingEndpoints.set(key, after);
    const trigger = removed ? undefined : parseTriggerTime(slice);
    if (trigger && trigger >= this.#startTime) {
      this.#triggerTimes.set(key, [...(this.#triggerTimes.get(key) ?? []), trigger]);
    }
    return true;
  }

  pendingCount(): number {
    return this.#pending.size;
  }

  apply(): EndpointsUpdateResult {
    const edits: Array<[string, readonly EndpointInfo[] | undefined]> = [];
    const updatedServices = new Set<string>();
    let conntrackCleanupRequired = false;
    for (const [key, slices] of this.#pending) {
      const [ns = "", svc = ""] = key.split("/");
      const previousKeys = this.#portKeys.get(key) ?? [];
      for (const portKey of previousKeys) edits.push([portKey, undefined]);
      const computed = this.#pendingEndpoints.get(key) ?? this.#compute(ns, svc, slices);
      const keys = [...computed.keys()];
      conntrackCleanupRequired ||= previousKeys.some(isUDPPortKey) || keys.some(isUDPPortKey);
      for (const entry of computed) edits.push(entry);
      if (keys.length === 0) this.#portKeys.delete(key);
      else this.#portKeys.set(key, keys);
      if (slices.size === 0) this.#applied.delete(key);
      else this.#applied.set(key, slices);
      updatedServices.add(key);
    }
    const lastChangeTriggerTimes = new Map(this.#triggerTimes);
    this.#pending.clear();
    this.#pendingEndpoints.clear();
    this.#triggerTimes.clear();
    // Earlier results stay as they were: the proxier judges the last programmed state against this one.
    this.#endpoints = this.#endpoints.with(edits);
    return { endpoints: this.#endpoints, updatedServices, lastChangeTriggerTimes, conntrackCleanupRequired };
  }
}

/** servicePortKey ends in "/<protocol>". */
const isUDPPortKey = (portKey: string): boolean => portKey.endsWith("/UDP");

function parseTriggerTime(slice: EndpointSlice): Date | undefined {
  const text = slice.metadata?.annotations?.[LAST_CHANGE_TRIGGER_TIME_ANNOTATION];
  if (!text) return undefined;
  const t = new Date(text);
  return Number.isNaN(t.getTime()) ? undefined : t;
}

/** Number of ready local endpoints per "ns/name", for the health-check server. */
export function localReadyEndpoints(endpoints: EndpointsMap): Map<string, number> {
  const out = new Map<string, number>();
  for (const [portKey, eps] of endpoints) {
    const svc = serviceOfPortKey(portKey);
    const n = eps.filter((ep) => ep.isLocal && ep.ready).length;
    if (n > 0) out.set(svc, Math.max(out.get(svc) ?? 0, n));
  }
  return out;
}
