/**
 * What plugins outside the query path set for the server their block runs on (CoreDNS keeps these in the
 * block's dnsserver.Config). Server blocks sharing a listener share one set: `debug` from any of them, each
 * timeout from the last block that sets it, as upstream's NewServer reads them.
 */
export interface ServerSettings {
  /** `debug`: an exception from a chain is not turned into SERVFAIL; it ends the process, as a panic does. */
  debug?: boolean;
  /**
   * `forward` in any block of this server: queries of classes other than IN are served, not refused (CoreDNS's
   * EnableChaos list: `chaos`, `forward`, `proxy`).
   */
  anyClass?: boolean;
  /** `errors { stacktrace }`: a recovered exception is logged with its stack. */
  stacktrace?: boolean;
  /** `timeouts read`: how long a new TCP connection may wait for its first query. */
  tcpReadTimeoutMs?: number;
  /** `timeouts idle`: how long a TCP connection may wait between queries. */
  tcpIdleTimeoutMs?: number;
  /** `timeouts write`: how long a TCP reply may take to be handed to the kernel before the connection is closed. */
  tcpWriteTimeoutMs?: number;
  /** `timeouts maxtcpqueries`: queries one TCP connection may ask before it is closed; -1 for no limit. */
  tcpMaxQueries?: number;
  /**
   * `bind`: the addresses this block listens on, instead of all. Not merged: build turns each address into a
   * listener of its own, shared with the blocks bound to the same address and port.
   */
  listenHosts?: string[];
}

/** Folds one block's settings into its listener's. */
export function mergeSettings(into: ServerSettings, from: ServerSettings): void {
  if (from.debug) into.debug = true;
  if (from.stacktrace) into.stacktrace = true;
  if (from.anyClass) into.anyClass = true;
  if (from.tcpReadTimeoutMs !== undefined) into.tcpReadTimeoutMs = from.tcpReadTimeoutMs;
  if (from.tcpIdleTimeoutMs !== undefined) into.tcpIdleTimeoutMs = from.tcpIdleTimeoutMs;
  if (from.tcpWriteTimeoutMs !== undefined) into.tcpWriteTimeoutMs = from.tcpWriteTimeoutMs;
  if (from.tcpMaxQueries !== undefined) into.tcpMaxQueries = from.tcpMaxQueries;
}
