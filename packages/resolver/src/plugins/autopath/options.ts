import type { Stanza } from "../../corefile/parse.js";
import { PluginError } from "../../plugin/handler.js";
import { readSearchList } from "../../plugin/pkg/resolv-conf.js";
import { normalizeZoneArgs } from "../../plugin/pkg/zone-args.js";

export const PLUGIN = "autopath";

/** What `autopath [ZONE...] RESOLV-CONF` configures. */
export interface AutoPathOptions {
  /** Zones whose queries may be autopathed; the server block's when none are given. */
  zones: string[];
  /**
   * The search path from a file, ending in "" (the bare name is the last try). Empty when RESOLV-CONF
   * names a plugin instead.
   */
  search: string[];
  /** `@NAME`: the plugin of this server block asked for a search path on every query. */
  source?: string;
}

/**
 * Reads the autopath stanzas of one server block the way CoreDNS does: every stanza is read in turn,
 * so a later one replaces the zones and the file of an earlier one, while an `@NAME` once seen stays.
 */
export function parseAutoPath(stanzas: readonly Stanza[], blockZones: readonly string[]): AutoPathOptions {
  const opts: AutoPathOptions = { zones: [...blockZones], search: [] };
  for (const stanza of stanzas) {
    const resolvConf = stanza.args.at(-1);
    // Upstream reads a block's `{` as the next stanza, which has no arguments.
    if (resolvConf === undefined || stanza.blockEnd !== undefined)
      throw new PluginError(PLUGIN, "no resolv-conf specified");
    if (resolvConf.startsWith("@")) {
      opts.source = resolvConf.slice(1);
    } else {
      opts.search = [...fileSearchPath(resolvConf), ""];
    }
    const zoneArgs = stanza.args.slice(0, -1);
    opts.zones = zoneArgs.length > 0 ? normalizeZoneArgs(zoneArgs) : [...blockZones];
  }
  return opts;
}

function fileSearchPath(path: string): string[] {
  try {
    return readSearchList(path);
  } catch (err) {
    throw new PluginError(PLUGIN, `failed to parse ${JSON.stringify(path)}: ${(err as Error).message}`);
  }
}
