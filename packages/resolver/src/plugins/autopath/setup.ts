import { Metrics } from "../../metrics/metrics.js";
import { PluginError } from "../../plugin/handler.js";
import { offeredAutoPath } from "../../plugin/pkg/search-source.js";
import type { Setup } from "../../plugin/setup.js";
import { AutoPathHandler, type SearchPathSource } from "./autopath.js";
import { autoPathSuccess } from "./metrics.js";
import { PLUGIN, parseAutoPath } from "./options.js";

export interface AutoPathDeps {
  metrics?: Metrics;
}

/**
 * `autopath [ZONE...] RESOLV-CONF`. With `@NAME` the plugin NAME of this server block is asked for each
 * query's search path; a NAME the block lacks turns autopath off silently, and one that offers no search
 * path is an error, both as in CoreDNS.
 */
export const setupAutoPath: Setup<AutoPathDeps> = (ctx) => {
  const opts = parseAutoPath(ctx.stanzas, ctx.blockZones);
  const success = autoPathSuccess(ctx.deps.metrics ?? new Metrics());
  const chain = ctx.server;
  return {
    // Chains are built from the back, so by now every plugin after this one has run its setup.
    plugin: (next) => {
      const source: SearchPathSource = { search: opts.search };
      const name = opts.source;
      if (name !== undefined && ctx.plugins.includes(name)) {
        const fromPlugin = offeredAutoPath(chain, name);
        if (!fromPlugin) throw new PluginError(PLUGIN, `${name} does not implement the AutoPather interface`);
        source.fromPlugin = fromPlugin;
      }
      return new AutoPathHandler(next, opts.zones, source, success);
    },
  };
};
