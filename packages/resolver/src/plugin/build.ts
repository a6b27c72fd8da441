import { parseZoneAddress } from "../corefile/address.js";
import { CorefileError } from "../corefile/errors.js";
import type { ServerBlock, Stanza } from "../corefile/parse.js";
import type { OutcomeObserver, Site } from "../server/dispatch.js";
import type { Handler, ResponseWriter } from "./handler.js";
import { pluginRank } from "./order.js";
import type { ServerSettings } from "./server-settings.js";
import { mergeSettings } from "./server-settings.js";
import type { Lifecycle, Plugin, Readiness, Setup } from "./setup.js";

/** Everything needed to run one listening port: the zones it serves and their chains. */
export interface ServerPlan {
  port: number;
  sites: Site[];
  /** What the plugins of its blocks set for the listener. */
  settings: ServerSettings;
  /** The address `bind` gave its blocks; undefined for all addresses. */
  address?: string;
}

export interface BuiltConfig<Deps> {
  servers: ServerPlan[];
  readiness: Readiness[];
  startup: (() => Promise<void> | void)[];
  shutdown: (() => Promise<void> | void)[];
  /** Enabled plugins per server block zone, for `coredns_plugin_enabled`. */
  enabled: { zone: string; port: number; plugins: string[]; hosts?: string[] }[];
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
  const taken = new Set<string>();
  for (const block of blocks) {
    const addresses = block.keys.map((k) =>
      parseZoneAddress(k, options.defaultPort ?? 53, block.file, block.line),
    );
    const byPort = new Map<number, string[]>();
    for (const a of addresses) byPort.set(a.port, [...(byPort.get(a.port) ?? []), a.zone]);
    for (const [port, zones] of byPort) {
      const chain = buildChain(block, zones, port, options, built);
      // Without `bind` a block listens on every address (undefined); with it, on each address it names.
      const hosts: (string | undefined)[] = chain.settings.listenHosts ?? [undefined];
      for (const host of hosts) {
        for (const zone of zones) {
          const key = `${host ?? ""}|${zone}:${port}`;
          if (taken.has(key))
            throw new CorefileError(
              block.file,
              block.line,
              `cannot serve ${zone} on port ${port}: zone defined twice`,
            );
          taken.add(key);
        }
        const plan = planFor(built, port, host, block);
        mergeSettings(plan.settings, chain.settings);
        for (const zone of zones)
          plan.sites.push({ zone, handler: chain.handler, observers: chain.observers });
      }
      const bound = chain.settings.listenHosts ? { hosts: chain.settings.listenHosts } : {};
      for (const zone of zones) built.enabled.push({ zone, port, plugins: chain.names, ...bound });
    }
  }
  return built;
}

/**
 * The listener for this port and address, made on first use. A port served on all addresses by some blocks
 * and on given ones by others would need SO_REUSEPORT listeners side by side, which this server does not open.
 */
function planFor<Deps>(
  built: BuiltConfig<Deps>,
  port: number,
  host: string | undefined,
  block: ServerBlock,
): ServerPlan {
  const found = built.servers.find((s) => s.port === port && s.address === host);
  if (found) return found;
  const other = built.servers.find(
    (s) => s.port === port && (s.address === undefined) !== (host === undefined),
  );
  if (other)
    throw new CorefileError(
      block.file,
      block.line,
      `plugin/bind: port ${port} served both on all addresses and on ${host ?? other.address} is not supported`,
    );
  const plan: ServerPlan = {
    port,
    sites: [],
    settings: {},
    ...(host === undefined ? {} : { address: host }),
  };
  built.servers.push(plan);
  return plan;
}

function buildChain<Deps>(
  block: ServerBlock,
  zones: string[],
  port: number,
  options: BuildOptions<Deps>,
  built: BuiltConfig<Deps>,
): { handler: Handler; names: string[]; observers: OutcomeObserver[]; settings: ServerSettings } {
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
  const settings: ServerSettings = {};
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
      server: settings,
    });
    if (result.plugin) plugins.push({ name, plugin: result.plugin });
  }
  let next: Handler | undefined;
  for (const { name, plugin } of [...plugins].reverse()) next = traced(name, plugin(next));
  const handler: Handler = next ?? {
    name: "empty",
    serveDNS: async () => ({ rcode: 2, error: new Error("no plugins in this server block") }),
  };
  return { handler, names: ordered, observers, settings };
}

/**
 * Records which plugin wrote the reply. The innermost writer runs first, so the plugin that produced the
 * reply claims it before the wrapping writers (cache, loadbalance) pass it on.
 */
function traced(name: string, handler: Handler): Handler {
  const fast = handler.answerFromWire?.bind(handler);
  const relay = handler.relayFromWire?.bind(handler);
  return {
    name: handler.name,
    ...(fast && {
      answerFromWire(q, ctx) {
        const reply = fast(q, ctx);
        if (reply) ctx.trace.plugin ??= name;
        return reply;
      },
    }),
    ...(relay && {
      // The innermost plugin that took the query claims it (the server drops the claim when the relay
      // wrote nothing), without a promise per plugin.
      relayFromWire(q, ctx) {
        const relayed = relay(q, ctx);
        if (relayed) ctx.trace.plugin ??= name;
        return relayed;
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
