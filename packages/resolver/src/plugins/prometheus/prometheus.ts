import type * as http from "node:http";
import { Metrics } from "../../metrics/metrics.js";
import type { HttpEndpointDeps } from "../../plugin/pkg/http-endpoint.js";
import { closeHttp, listenHttpAsync, parseListenAddress } from "../../plugin/pkg/http-endpoint.js";
import type { Setup } from "../../plugin/setup.js";
import { argError, onlyOnce, stanzaError } from "../../plugin/setup.js";
import { dnsObserver } from "./dns-metrics.js";

export interface PrometheusDeps extends HttpEndpointDeps {
  metrics?: Metrics;
  /** What /metrics serves; default this resolver's registry (a worker process serves every worker's sum). */
  scrape?: () => Promise<string>;
}

interface Endpoint {
  users: number;
  server?: http.Server;
  starting?: Promise<void>;
}

// Blocks that name the same address share one listener; keyed per registry so resolvers never collide.
const endpoints = new WeakMap<Metrics, Map<string, Endpoint>>();
const observers = new WeakMap<Metrics, ReturnType<typeof dnsObserver>>();

/** `prometheus [ADDRESS]`: serves /metrics (default localhost:9153) and counts every query of the block. */
export const setupPrometheus: Setup<PrometheusDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, "prometheus");
  if (stanza.args.length > 1) throw argError(stanza, "prometheus");
  const address = stanza.args[0] ?? "localhost:9153";
  const listen = parseListenAddress(address);
  if (!listen) throw stanzaError(stanza, "prometheus", `invalid address '${address}'`);
  const first = stanza.block[0];
  if (first) throw stanzaError(first, "prometheus", `option '${first.name}' is not supported yet`);
  const metrics = ctx.deps.metrics ?? new Metrics();
  let observe = observers.get(metrics);
  if (!observe) {
    observe = dnsObserver(metrics);
    observers.set(metrics, observe);
    metrics
      .gauge(
        "coredns_build_info",
        "A metric with a constant '1' value labeled by version, revision, and goversion from which CoreDNS was built.",
        ["version", "revision", "goversion"],
        "first",
      )
      .set({ version: "0.1.0", revision: "", goversion: process.version }, 1);
  }
  ctx.observe(observe);
  const enabled = metrics.gauge(
    "coredns_plugin_enabled",
    "A metric that indicates whether a plugin is enabled on per server and zone basis.",
    ["server", "zone", "view", "name"],
    "first",
  );
  for (const zone of ctx.blockZones)
    for (const name of ctx.plugins) enabled.set({ server: `dns://:${ctx.port}`, zone, view: "", name }, 1);

  const shared = endpoints.get(metrics) ?? new Map<string, Endpoint>();
  endpoints.set(metrics, shared);
  const endpoint = shared.get(address) ?? { users: 0 };
  shared.set(address, endpoint);
  endpoint.users++;
  ctx.lifecycle.onStartup(async () => {
    endpoint.starting ??= listenHttpAsync(listen.host, listen.port, "/metrics", async () => ({
      status: 200,
      body: await (ctx.deps.scrape ?? (() => metrics.text()))(),
      contentType: metrics.registry.contentType,
    })).then((started) => {
      endpoint.server = started.server;
      ctx.deps.onHttpListen?.("prometheus", started.port);
    });
    await endpoint.starting;
  });
  ctx.lifecycle.onShutdown(async () => {
    endpoint.users--;
    if (endpoint.users === 0 && endpoint.server) await closeHttp(endpoint.server);
  });
  return {};
};
