import { fqdn, isSubdomain, lowerName } from "../wire/name.js";

/** Normalises a configured zone: absolute and lower case. */
export function normalizeZone(zone: string): string {
  return lowerName(fqdn(zone));
}

/** The longest of `zones` that `name` is in or below, or undefined. Like CoreDNS's plugin.Zones.Matches. */
export function matchZone(name: string, zones: readonly string[]): string | undefined {
  let best: string | undefined;
  for (const zone of zones) {
    if (isSubdomain(name, zone) && (best === undefined || zone.length > best.length)) best = zone;
  }
  return best;
}
