// A node's eBPF maps as explain reads them: the raw entries of the three maps the proxy writes, for one family,
// and their decoding by the proxier's own codec. Pure; read-node.ts dumps them from the pins.
import type { IPFamily } from "@switchyard/basics";
import { type ContentsMapName, decodeContents, type MapContents } from "@switchyard/proxier";

export type RawEntries = readonly (readonly [key: Uint8Array, value: Uint8Array])[];

/** What one family's maps held when they were dumped. */
export interface FamilyMaps {
  family: IPFamily;
  dumps: Readonly<Record<ContentsMapName, RawEntries>>;
}

/** The maps the proxy writes and explain reads, in the order they are dumped (backends before the slots naming them). */
export const proxyMaps: readonly ContentsMapName[] = ["backends", "revNat", "services"];

/**
 * The dumps decoded; an entry of the wrong size (a map written by another build of the proxy) is a problem, and
 * the contents are then empty rather than half read.
 */
export function decodeMaps(maps: FamilyMaps): { contents: MapContents; problems: string[] } {
  try {
    return { contents: decodeContents(maps.family, maps.dumps), problems: [] };
  } catch (err) {
    const empty = decodeContents(maps.family, { services: [], backends: [], revNat: [] });
    return { contents: empty, problems: [`not decoded: ${(err as Error).message}`] };
  }
}
