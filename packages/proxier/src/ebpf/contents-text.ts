// Map contents as text, one entry per line, keys and values decoded: the golden files' form (`contentsText`,
// ids as the maps hold them) and a form without ids (`resolvedText`: every backend id and reverse NAT index
// replaced by what it names), which two syncs that numbered things differently still agree on.

import { hostPort, parseIP } from "@switchyard/basics";
import {
  addressName,
  type BackendRecord,
  type MapContents,
  type RevNatRecord,
  type ServiceEntry,
  serviceEntryName,
} from "./contents.js";
import { backendFlags, familyPrefix, serviceFlags } from "./layout.js";

/** The names of the bits set in `flags`, "|"-joined, in the order layout.ts defines them. */
function flagNames(flags: number, names: Readonly<Record<string, number>>): string {
  const set = Object.entries(names)
    .filter(([, bit]) => (flags & bit) !== 0)
    .map(([name]) => name);
  const unknown = flags & ~Object.values(names).reduce((a, b) => a | b, 0);
  if (unknown !== 0) set.push(`0x${unknown.toString(16)}`);
  return set.join("|");
}

export function serviceFlagNames(flags: number): string {
  return flagNames(flags, serviceFlags);
}

export function backendText(b: BackendRecord): string {
  const flags = flagNames(b.flags, backendFlags);
  return `${addressName(b.address, b.port, b.proto)}${flags ? ` ${flags}` : ""}`;
}

export function revNatText(r: RevNatRecord): string {
  return hostPort(r.address, r.port);
}

/** Slot 0's value: the count and what applies to the whole frontend. */
function headText(e: ServiceEntry, revNat: string): string {
  const v = e.value;
  const affinity = v.affinityTimeout > 0 ? `, affinity ${v.affinityTimeout}s` : "";
  return `count ${v.count}, revNat ${revNat}, flags ${serviceFlagNames(v.flags) || "-"}${affinity}`;
}

/** Orders service entries by address (bytes), port, protocol, scope and slot. */
function compareServiceEntries(a: ServiceEntry, b: ServiceEntry): number {
  const ka = a.key;
  const kb = b.key;
  return (
    compareAddresses(ka.address, kb.address) ||
    ka.dport - kb.dport ||
    ka.proto - kb.proto ||
    ka.scope - kb.scope ||
    ka.backendSlot - kb.backendSlot
  );
}

export function compareAddresses(a: string, b: string): number {
  const x = parseIP(a)?.bytes ?? new Uint8Array();
  const y = parseIP(b)?.bytes ?? new Uint8Array();
  if (x.length !== y.length) return x.length - y.length;
  for (let i = 0; i < x.length; i++) if (x[i] !== y[i]) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/** The service entries, sorted (see compareServiceEntries). */
export function sortedServiceEntries(contents: MapContents): ServiceEntry[] {
  return [...contents.services.values()].sort(compareServiceEntries);
}

/** Every entry of the three maps, as they hold it: `lb4_services 172.30.0.41:80/TCP external slot 1 => backend 3, revNat 1`. */
export function contentsText(contents: MapContents): string {
  const p = familyPrefix(contents.family);
  const lines: string[] = [];
  for (const [id, b] of [...contents.backends].sort(([a], [b]) => a - b)) {
    lines.push(`${p}_backends ${id} => ${backendText(b)}`);
  }
  for (const [index, r] of [...contents.revNat].sort(([a], [b]) => a - b)) {
    lines.push(`${p}_reverse_nat ${index} => ${revNatText(r)}`);
  }
  for (const e of sortedServiceEntries(contents)) {
    const v = e.value;
    const value =
      e.key.backendSlot === 0
        ? headText(e, String(v.revNatIndex))
        : `backend ${v.backendId}, revNat ${v.revNatIndex}`;
    lines.push(`${p}_services ${serviceEntryName(e.key)} => ${value}`);
  }
  for (const [index, ranges] of [...(contents.sourceRanges ?? [])].sort(([a], [b]) => a - b)) {
    for (const range of ranges) lines.push(`${p}_src_range ${index} ${range}`);
  }
  return lines.join("\n");
}

/**
 * The same entries with ids resolved: a slot names its backend's address, every entry its reverse NAT
 * frontend; the backend and reverse NAT maps are listed by value. A dangling id shows as `missing backend 7`.
 */
export function resolvedText(contents: MapContents): string {
  const p = familyPrefix(contents.family);
  const backend = (id: number) => {
    const b = contents.backends.get(id);
    return b ? backendText(b) : `missing backend ${id}`;
  };
  const revNat = (index: number) => {
    const r = contents.revNat.get(index);
    return r ? revNatText(r) : `missing revNat ${index}`;
  };
  const lines = [
    ...[...contents.backends.values()].map((b) => `${p}_backends ${backendText(b)}`).sort(),
    ...[...contents.revNat.values()].map((r) => `${p}_reverse_nat ${revNatText(r)}`).sort(),
  ];
  for (const e of sortedServiceEntries(contents)) {
    const v = e.value;
    const value =
      e.key.backendSlot === 0
        ? headText(e, revNat(v.revNatIndex))
        : `${backend(v.backendId)}, revNat ${revNat(v.revNatIndex)}`;
    lines.push(`${p}_services ${serviceEntryName(e.key)} => ${value}`);
  }
  const ranges = [...(contents.sourceRanges ?? [])].flatMap(([index, list]) =>
    list.map((range) => `${p}_src_range ${revNat(index)} ${range}`),
  );
  return lines.concat(ranges.sort()).join("\n");
}
