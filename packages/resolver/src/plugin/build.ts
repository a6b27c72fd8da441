import { parseZoneAddress } from "../corefile/address.js";
import { CorefileError } from "../corefile/errors.js";
import type { ServerBlock, Stanza } from "../corefile/parse.js";
import type { OutcomeObserver, Site } from "../server/dispatch.js";
import type { Handler, ResponseWriter } from "./handler.js";
import { pluginRank } from "./order.js";
import type { Lifecycle, Plugin, Readiness, Setup } from "./setup.js";

/** Everything needed to run one listening port: the zones it serves and their chains. */
export interface ServerPlan {
  port: number;
  sites: Site[];
}

export interface BuiltConfig<Deps> {
  servers: ServerPlan[];
  readiness: Readiness[];
  startup: (() => Promise<void> | void)[];
  shutdown: (() => Promise<void> | void)[];
  /** Enabled plugins per server block zone, for `coredns_plugin_enabled`. */
  enabled: { zone: string; port: number; plugins: string[] }[];
  deps: Deps;
}

export interface BuildOptions<Deps> {
  registry: ReadonlyMap<string, Setup<Deps>>;
  deps: Deps;
  defaultPort?: number;
}

/**
 * Runs every plugin's setup for every server block and wires the chains in plugin.cfg order. One chain
 * is built per block and shared by all of its zones, as in CoreDNS.
 */
export function buildConfig<Deps>(
  blocks: readonly ServerBlock[],
  options: BuildOptions<Deps>,
): BuiltConfig<Deps> {
  const built: BuiltConfig<Deps> = {
    servers: [],
    readiness: [],
    startup: [],
    shutdown: [],
    enabled: [],
    deps: options.deps,
  };
  const taken = new Map<string, ServerBlock>();
  for (const block of blocks) {
    const addresses = block.keys.map((k) =>
      parseZoneAddress(k, options.defaultPort ?? 53, block.file, block.line),
    );
    for (const a of addresses) {
      const key = `${a.zone}:${a.port}`;
      if (taken.has(key))
        throw new CorefileError(
          block.file,
          block.line,
          `cannot serve ${a.zone} on port ${a.port}: zone defined twice`,
        );
      taken.set(key, block);
    }
    const byPort = new Map<number, string[]>();
    for (const a of addresses) byPort.set(a.port, [...(byPort.get(a.port) ?? []), a.zone]);
    for (const [port, zones] of byPort) {
      const { handler, names, observers } = buildChain(block, zones, port, options, built);
      let plan = built.servers.find((s) => s.port === port);
      if (!plan) {
        plan = { port, sites: [] };
        built.servers.push(plan);
      }
      for (const zone of zones) {
        plan.sites.push({ zone, handler, observers });
        built.enabled.push({ zone, port, plugins: names });
      }
    }
  }
  return built;
}

function buildChain<Deps>(
  block: ServerBlock,
  zones: string[],
  port: number,
  options: BuildOptions<Deps>,
  built: BuiltConfig<Deps>,
): { handler: Handler; names: string[]; observers: OutcomeObserver[] } {
  const grouped = new Map<string, Stanza[]>();
  for (const stanza of block.stanzas) {
    if (pluginRank(stanza.name) < 0 || !options.registry.has(stanza.name)) {
      const known = pluginRank(stanza.name) >= 0 ? " (not available in this build)" : "";
      throw new CorefileError(stanza.file, stanza.line, `Unknown directive '${stanza.name}'${known}`);
    }
    grouped.set(stanza.name, [...(grouped.get(stanza.name) ?? []), stanza]);
  }
  const lifecycle: Lifecycle = {
    onStartup: (fn) => built.startup.push(fn),
    onShutdown: (fn) => built.shutdown.push(fn),
  };
  const observers: OutcomeObserver[] = [];
  const ordered = [...grouped.keys()].sort((a, b) => pluginRank(a) - pluginRank(b));
  const plugins: { name: string; plugin: Plugin }[] = [];
  for (const name of ordered) {
    const setup = options.registry.get(name) as Setup<Deps>;
    const result = setup({
      stanzas: grouped.get(name) ?? [],
      blockZones: zones,
      port,
      plugins: ordered,
      deps: options.deps,
      lifecycle,
      reportReadiness: (r) => built.readiness.push(r),
      observe: (fn) => observers.push(fn),
      allReadiness: () => built.readiness,
    });
    if (result.plugin) plugins.push({ name, plugin: result.plugin });
  }
  let next: Handler | undefined;
  for (const { name, plugin } of [...plugins].reverse()) next = traced(name, plugin(next));
  const handler: Handler = next ?? {
    name: "empty",
    serveDNS: async () => ({ rcode: 2, error: new Error("no plugins in this server block") }),
  };
  return { handler, names: ordered, observers };
}

/**
 * Records which plugin wrote the reply. The innermost writer runs first, so the plugin that produced the
 * reply claims it before the wrapping writers (cache, loadbalance) pass it on.
 */
function traced(name: string, handler: Handler): Handler {
  const fast = handler.answerFromWire?.bind(handler);
  return {
    name: handler.name,
    ...(fast && {
      answerFromWire(q, ctx) {
        const reply = fast(q, ctx);
        if (reply) ctx.trace.plugin ??= name;
        return reply;
      },
    }),
    serveDNS(ctx, w, r) {
      const trace = ctx.trace;
      if (!trace) return handler.serveDNS(ctx, w, r);
      const claiming: ResponseWriter = {
        transport: w.transport,
        remote: w.remote,
        write(msg, wire) {
          trace.plugin ??= name;
          w.write(msg, wire);
        },
      };
      return handler.serveDNS(ctx, claiming, r);
    },
  };
}
