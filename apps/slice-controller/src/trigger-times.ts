import type { Pod, Service } from "kubernetes-types/core/v1.js";

interface Observed {
  service: number;
  pods: Map<string, number>;
}

function time(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? undefined : ms;
}

/**
 * Works out endpoints.kubernetes.io/last-change-trigger-time per Service: the earliest change the
 * controller had not yet seen at its last sync. A Pod's change time is its Ready condition's
 * transition; the Service's is its creation. kube-proxy subtracts this from the moment it programs
 * the rules, so it must name when the change happened, not when the controller noticed it.
 */
export class TriggerTimes {
  readonly #observed = new Map<string, Observed>();

  /** The trigger time for this sync, and remembers what it saw for the next one. */
  compute(serviceKey: string, service: Service, pods: readonly Pod[]): Date | undefined {
    const previous = this.#observed.get(serviceKey);
    const next: Observed = { service: time(service.metadata?.creationTimestamp) ?? 0, pods: new Map() };
    let earliest: number | undefined;
    const consider = (t: number) => {
      earliest = earliest === undefined ? t : Math.min(earliest, t);
    };
    for (const pod of pods) {
      const ready = pod.status?.conditions?.find((c) => c.type === "Ready");
      const t = time(ready?.lastTransitionTime);
      if (t === undefined) continue;
      const name = pod.metadata?.name ?? "";
      next.pods.set(name, t);
      if (previous?.pods.get(name) !== t) consider(t);
    }
    if (previous === undefined || previous.service !== next.service) consider(next.service);
    this.#observed.set(serviceKey, next);
    return earliest === undefined ? undefined : new Date(earliest);
  }

  delete(serviceKey: string): void {
    this.#observed.delete(serviceKey);
  }
}
