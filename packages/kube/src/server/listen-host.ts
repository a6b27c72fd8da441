// Go's net.Listen("tcp", "0.0.0.0:port") opens one IPv6 socket that takes IPv4 too, where the kernel has
// IPv6: the upstream components' default bind addresses (0.0.0.0:10256, 0.0.0.0:10257, ...) answer on both
// families. Node's listen() on "0.0.0.0" takes IPv4 only, so an IPv6-only pod's probe of such a port failed.
// Node does what Go does when it is given no host: "::" where IPv6 is available, else "0.0.0.0".

const UNSPECIFIED = new Set(["", "0.0.0.0", "::", "[::]"]);

/** Whether `host` names no address: "" or either family's unspecified address. */
export function isUnspecifiedAddress(host: string): boolean {
  return UNSPECIFIED.has(host);
}

/** The host to hand node's listen(): undefined for an unspecified address (every address of both families). */
export function listenHost(host: string | undefined): string | undefined {
  return host === undefined || isUnspecifiedAddress(host) ? undefined : host;
}
