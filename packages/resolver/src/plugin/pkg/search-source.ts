import type { Peer } from "../handler.js";

/** What a plugin is told about a query when autopath asks it for a search path. */
export interface AutoPathRequest {
  /** The query name, lower case and absolute. */
  name: string;
  /** Who asked: the kubernetes plugin finds the client's pod by its address. */
  remote: Peer;
}

/**
 * A plugin's search path for one query (CoreDNS's autopath.Func): the suffixes to try in order, ending
 * with "" for the bare name, or undefined when this query is not to be autopathed.
 */
export type AutoPathFunc = (request: AutoPathRequest) => readonly string[] | undefined;

/**
 * The AutoPather each plugin of a server block offers, keyed by an object that stands for the block's
 * chain (its ServerSettings, which every setup of one chain shares). CoreDNS looks the plugin up in the
 * block's config; our setups have no such lookup, so the plugin publishes itself here during its setup.
 */
const pathersByChain = new WeakMap<object, Map<string, AutoPathFunc>>();

/** Called by a plugin's setup to offer its search path to an `autopath @NAME` in the same block. */
export function offerAutoPath(chain: object, plugin: string, fn: AutoPathFunc): void {
  const pathers = pathersByChain.get(chain) ?? new Map<string, AutoPathFunc>();
  pathers.set(plugin, fn);
  pathersByChain.set(chain, pathers);
}

/** The search path `plugin` offered in this chain, if it offered one. */
export function offeredAutoPath(chain: object, plugin: string): AutoPathFunc | undefined {
  return pathersByChain.get(chain)?.get(plugin);
}
