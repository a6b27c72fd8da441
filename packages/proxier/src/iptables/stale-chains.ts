// Which per-service chains in the kernel no Service port owns after this sync. Chain names
// hash the service port (and endpoint), so a chain belongs to one port key: comparing each
// port's chains with what it had last time finds them, and a partial sync looks only at the
// ports that changed. A set of every chain (120k at 10k Services) is built only on a first
// sync that found chains of an earlier run.
import { compareStrings } from "../model/endpoint.js";
import { isServiceChainName } from "./names.js";
import type { ServicePortRecord } from "./service-record.js";

export interface ChainHistory {
  readonly servicePorts: ReadonlyMap<string, ServicePortRecord>;
  /** Stale chains whose deletion was put off (large-cluster mode). */
  readonly leftoverChains: readonly string[];
}

export function staleChains(
  records: ReadonlyMap<string, ServicePortRecord>,
  previous: ChainHistory | undefined,
  existingNATChains: readonly string[] | undefined,
): string[] {
  if (!previous) {
    const found = (existingNATChains ?? []).filter(isServiceChainName);
    if (found.length === 0) return [];
    const active = new Set<string>();
    for (const record of records.values()) for (const chain of record.chains) active.add(chain);
    return found.filter((c) => !active.has(c)).sort(compareStrings);
  }
  const leftovers = new Set(previous.leftoverChains);
  const stale: string[] = [];
  for (const [key, before] of previous.servicePorts) {
    const now = records.get(key);
    if (now === before) continue;
    if (!now) {
      stale.push(...before.chains);
      continue;
    }
    if (leftovers.size > 0) for (const chain of now.chains) leftovers.delete(chain); // in use again
    if (sameChains(before.chains, now.chains)) continue;
    const kept = new Set(now.chains);
    for (const chain of before.chains) if (!kept.has(chain)) stale.push(chain);
  }
  return [...leftovers, ...stale].sort(compareStrings);
}

function sameChains(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}
