import type { ParseOptions } from "./corefile/parse.js";
import { parseCorefile } from "./corefile/parse.js";
import { Metrics } from "./metrics/metrics.js";
import type { BuiltConfig } from "./plugin/build.js";
import { buildConfig } from "./plugin/build.js";
import type { Setup } from "./plugin/setup.js";
import { matchZone } from "./plugin/zones.js";
import type { ResolverDeps } from "./registry.js";
import { defaultRegistry } from "./registry.js";
import { dispatch } from "./server/dispatch.js";
import type { DnsServerOptions } from "./server/dns-server.js";
import { DnsServer } from "./server/dns-server.js";
import { decodeMessage } from "./wire/decode.js";
import { encodeMessage } from "./wire/encode.js";
import type { Message } from "./wire/message.js";
import { newQuery } from "./wire/message.js";

export interface ResolverOptions extends Pick<ParseOptions, "env" | "readFile" | "file"> {
  deps?: ResolverDeps;
  registry?: ReadonlyMap<string, Setup<ResolverDeps>>;
  /**
   * Bind address for every server whose block has no `bind`. By default every address of both families, as
   * CoreDNS listens on `:53`: one `::` socket that takes IPv4 too (`0.0.0.0` where the kernel has no IPv6).
   */
  address?: string;
  /** Overrides every block's port (tests use 0). */
  portOverride?: number;
  /** The port of blocks that name none; 53 unless set (CoreDNS's -dns.port). */
  defaultPort?: number;
  server?: Omit<DnsServerOptions, "sites" | "address" | "port">;
}

/** A Corefile turned into running DNS servers: parse, set up plugins, listen, and stop again. */
export class Resolver {
  readonly servers: DnsServer[];

  private constructor(
    public config: BuiltConfig<ResolverDeps>,
    options: ResolverOptions,
  ) {
    this.servers = config.servers.map(
      (plan) =>
        new DnsServer({
          ...(config.deps.errorLog ? { log: config.deps.errorLog } : {}),
          ...options.server,
          sites: plan.sites,
          settings: plan.settings,
          // A block's `bind` wins over the embedder's default address.
          ...((plan.address ?? options.address) === undefined
            ? {}
            : { address: plan.address ?? options.address }),
          port: options.portOverride ?? plan.port,
        }),
    );
  }

  /** Parses and sets up; throws a CorefileError naming file and line on any problem. Nothing listens yet. */
  static fromCorefile(text: string, options: ResolverOptions = {}): Resolver {
    const blocks = parseCorefile(text, options);
    const deps: ResolverDeps = { ...options.deps };
    deps.metrics ??= new Metrics();
    let resolver: Resolver | undefined;
    // ExternalName targets outside the cluster re-enter the server, as CoreDNS's upstream does.
    deps.upstream ??= (name, qtype) =>
      resolver ? resolver.query(newQuery(name, qtype, 0)) : Promise.resolve(undefined);
    const { file, readFile } = options;
    if (file && readFile) {
      deps.corefileText ??= () => readFile(file);
      deps.applyCorefile ??= (next) => (resolver ? resolver.reload(next) : Promise.resolve());
    }
    const config = buildConfig(blocks, {
      registry: options.registry ?? defaultRegistry(),
      deps,
      ...(options.defaultPort === undefined ? {} : { defaultPort: options.defaultPort }),
    });
    resolver = new Resolver(config, options);
    resolver.options = options;
    return resolver;
  }

  private options: ResolverOptions = {};

  /**
   * Applies a new Corefile without closing the DNS sockets: builds it completely first (a bad one throws
   * and changes nothing), stops the old plugins' hooks, starts the new ones, then swaps the chains.
   * The new Corefile must keep the same set of ports.
   */
  async reload(text: string): Promise<void> {
    const blocks = parseCorefile(text, this.options);
    const next = buildConfig(blocks, {
      registry: this.options.registry ?? defaultRegistry(),
      deps: this.config.deps,
      ...(this.options.defaultPort === undefined ? {} : { defaultPort: this.options.defaultPort }),
    });
    const ports = (c: BuiltConfig<ResolverDeps>) =>
      c.servers.map((s) => `${s.address ?? ""}:${s.port}`).join(",");
    if (ports(next) !== ports(this.config)) throw new Error("reload cannot change the listening ports");
    for (const hook of this.config.shutdown) await hook();
    for (const hook of next.startup) await hook();
    for (const [i, plan] of next.servers.entries()) this.servers[i]?.replaceSites(plan.sites, plan.settings);
    this.config = next;
  }

  async start(): Promise<void> {
    for (const hook of this.config.startup) await hook();
    for (const server of this.servers) await server.start();
  }

  async stop(graceMs?: number): Promise<void> {
    for (const hook of this.config.shutdown) await hook();
    await Promise.all(this.servers.map((s) => s.stop(graceMs)));
  }

  /** Answers a query in-process through the chain that owns its name (no sockets). */
  async query(request: Message): Promise<Message | undefined> {
    const name = request.question[0]?.name ?? ".";
    const plan =
      this.config.servers.find(
        (p) =>
          matchZone(
            name,
            p.sites.map((s) => s.zone),
          ) !== undefined,
      ) ?? this.config.servers[0];
    if (!plan) return undefined;
    const out = await dispatch(encodeMessage(request), {
      sites: plan.sites,
      server: "internal",
      transport: "tcp",
      remote: { address: "127.0.0.1", port: 0, family: "IPv4" },
    });
    if (!out.reply) return undefined;
    const d = decodeMessage(out.reply);
    return d.kind === "message" ? d.message : undefined;
  }
}
