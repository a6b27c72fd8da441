import { CorefileError, PluginOnceError } from "../corefile/errors.js";
import type { Stanza } from "../corefile/parse.js";
import type { OutcomeObserver } from "../server/dispatch.js";
import type { Handler } from "./handler.js";
import type { ServerSettings } from "./server-settings.js";

/** Turns the next handler into this plugin's handler (CoreDNS's plugin.Plugin). */
export type Plugin = (next: Handler | undefined) => Handler;

/** Something that can say whether it is ready to serve (the `ready` plugin polls these). */
export interface Readiness {
  readonly name: string;
  ready(): boolean;
  /** Why it is not ready, one line per cause, for the /ready body (kubectl describe shows only the code). */
  notReadyReasons?(): string[];
}

/** Start and stop hooks a plugin registers during setup (caddy's OnStartup / OnShutdown). */
export interface Lifecycle {
  onStartup(fn: () => Promise<void> | void): void;
  onShutdown(fn: () => Promise<void> | void): void;
}

/** What a plugin's setup gets: its stanzas in one server block, the block's zones, and shared services. */
export interface SetupContext<Deps = unknown> {
  readonly stanzas: readonly Stanza[];
  /** The server block's zones, normalised (`cluster.local.`). */
  readonly blockZones: readonly string[];
  readonly port: number;
  /** Every plugin of this server block, in chain order (for `coredns_plugin_enabled`). */
  readonly plugins: readonly string[];
  readonly deps: Deps;
  readonly lifecycle: Lifecycle;
  /** Registers a readiness reporter for the `ready` plugin. */
  reportReadiness(r: Readiness): void;
  /** Every reporter registered so far, in all server blocks (read at query time, after setup). */
  allReadiness(): readonly Readiness[];
  /** Watches every reply this server block sends (and queries no block took), after it was sent. */
  observe(fn: OutcomeObserver): void;
  /** Settings for the server this block listens on (`debug`, `timeouts`), filled in during setup. */
  readonly server: ServerSettings;
}

/**
 * What setup returns. `plugin` is absent for plugins that live outside the query path (health, ready,
 * reload), which only hook into the lifecycle.
 */
export interface SetupResult {
  plugin?: Plugin;
}

export type Setup<Deps = unknown> = (ctx: SetupContext<Deps>) => SetupResult;

/** A setup error pointing at a stanza: `plugin/kubernetes: Corefile:7 - Error during parsing: ttl must be ...`. */
export function stanzaError(stanza: Stanza, plugin: string, message: string): CorefileError {
  return new CorefileError(stanza.file, stanza.line, message, plugin);
}

/** Most plugins may appear once per server block; CoreDNS's refusal names no position. */
export function onlyOnce(ctx: SetupContext, plugin: string): Stanza {
  const [first, second] = ctx.stanzas;
  if (second) throw new PluginOnceError(second.file, second.line, plugin);
  if (!first) throw new Error(`setup for ${plugin} called without a stanza`);
  return first;
}

/** CoreDNS's "Wrong argument count or unexpected line ending" for a stanza or a block line. */
export function argError(stanza: Stanza, plugin: string): CorefileError {
  return stanzaError(stanza, plugin, `Wrong argument count or unexpected line ending after '${stanza.name}'`);
}
