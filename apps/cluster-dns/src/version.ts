import { arch, platform } from "node:process";

export const VERSION = "0.1.0";
/** The CoreDNS release whose behaviour, Corefile and flags this server follows. */
export const COREDNS_VERSION = "1.14.7";

/**
 * What `-version` and the startup banner print. The first line keeps CoreDNS's `<Name>-<version>`
 * shape, so scripts that grep for it still find a version, and says plainly that this is not CoreDNS.
 */
export function versionLines(): string[] {
  return [
    `Switchyard-DNS-${VERSION} (CoreDNS-${COREDNS_VERSION} compatible)`,
    `${platform}/${arch}, node${process.versions.node}`,
  ];
}
