// The service port keys a partial sync renders again: those the changed Services had when last rendered, and those
// they have now. One copy for the renderers that sync Service by Service (nftables, ebpf).

import { compareStrings } from "./endpoint.js";
import type { ServicePortMap } from "./service-change-tracker.js";
import { serviceOfPortKey } from "./service-port-name.js";

export interface ChangedPortsInput {
  readonly services: ServicePortMap;
  /** "ns/name" of the Services whose Service or endpoints changed. */
  readonly changedServices?: ReadonlySet<string>;
  /**
   * The port keys of the Services whose Service object changed, before and after, as the change tracker knows
   * them. Without it, one pass over every key of `services` finds a changed Service's new ports.
   */
  readonly changedServicePorts?: ReadonlySet<string>;
}

/** Sorted; `rendered` holds the port keys each Service had at the last render. */
export function changedPortKeys(
  rendered: ReadonlyMap<string, Iterable<string>>,
  input: ChangedPortsInput,
): string[] {
  const changed = input.changedServices ?? new Set<string>();
  const ports = new Set<string>();
  for (const svc of changed) for (const key of rendered.get(svc) ?? []) ports.add(key);
  if (input.changedServicePorts) {
    for (const key of input.changedServicePorts) if (input.services.has(key)) ports.add(key);
  } else if (changed.size > 0) {
    const few = changed.size <= 8 ? [...changed] : undefined;
    for (const key of input.services.keys())
      if (few ? few.some((svc) => ownsKey(svc, key)) : changed.has(serviceOfPortKey(key))) ports.add(key);
  }
  return [...ports].sort(compareStrings);
}

/** Whether a service port key belongs to "ns/name" (its port name or protocol follows). */
function ownsKey(svc: string, key: string): boolean {
  if (!key.startsWith(svc)) return false;
  const next = key.charCodeAt(svc.length);
  return next === 58 || next === 47; // ":" or "/"
}
