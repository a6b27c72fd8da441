import { compareStrings } from "../model/endpoint.js";

/**
 * The map's keys in sorted order (renderers walk Services in it, so a transaction is stable). When
 * `previous` holds exactly the same keys, as on most partial syncs, it is returned as it is: one
 * lookup per key instead of sorting 10k strings on every endpoint change.
 */
export function sortedKeys(
  map: ReadonlyMap<string, unknown>,
  previous?: readonly string[],
): readonly string[] {
  if (previous !== undefined && previous.length === map.size && previous.every((k) => map.has(k)))
    return previous;
  return [...map.keys()].sort(compareStrings);
}
