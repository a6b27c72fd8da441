import type { Endpoint, TargetRef } from "./types.js";

/**
 * Identity of an endpoint: its addresses, hostname and the referenced object's namespace/name.
 * Everything else (conditions, topology, hints) can change while the endpoint keeps its place in
 * its slice, which is what keeps routine Pod updates to a single slice write.
 */
export function endpointKey(endpoint: Endpoint): string {
  return JSON.stringify([
    [...endpoint.addresses].sort(),
    endpoint.hostname ?? "",
    endpoint.targetRef?.namespace ?? "",
    endpoint.targetRef?.name ?? "",
  ]);
}

/**
 * The desired endpoints of one port-map group, keyed by identity. Iteration follows insertion
 * (Pod) order, so "take any" is deterministic where upstream's map order is random.
 */
export class EndpointSet {
  readonly #byKey = new Map<string, Endpoint>();

  get size(): number {
    return this.#byKey.size;
  }

  insert(endpoint: Endpoint): void {
    this.#byKey.set(endpointKey(endpoint), endpoint);
  }

  get(endpoint: Endpoint): Endpoint | undefined {
    return this.#byKey.get(endpointKey(endpoint));
  }

  delete(endpoint: Endpoint): void {
    this.#byKey.delete(endpointKey(endpoint));
  }

  /** Removes and returns the oldest endpoint; undefined when empty. */
  pop(): Endpoint | undefined {
    const first = this.#byKey.entries().next();
    if (first.done) return undefined;
    this.#byKey.delete(first.value[0]);
    return first.value[1];
  }
}

function sameTargetRef(a: TargetRef | undefined, b: TargetRef | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  // resourceVersion is ignored: it moves on every Pod write and would cause pointless updates.
  return (
    a.kind === b.kind &&
    a.namespace === b.namespace &&
    a.name === b.name &&
    a.uid === b.uid &&
    a.apiVersion === b.apiVersion &&
    a.fieldPath === b.fieldPath
  );
}

/** True when two endpoints with the same identity also agree on everything the controller writes. */
export function endpointsEqualBeyondKey(a: Endpoint, b: Endpoint): boolean {
  return (
    a.nodeName === b.nodeName &&
    a.zone === b.zone &&
    a.conditions?.ready === b.conditions?.ready &&
    a.conditions?.serving === b.conditions?.serving &&
    a.conditions?.terminating === b.conditions?.terminating &&
    sameTargetRef(a.targetRef, b.targetRef)
  );
}
