import type * as http from "node:http";
import { goDurationError, parseGoDuration } from "@switchyard/basics";
import type { Metrics } from "../../metrics/metrics.js";
import { PluginError } from "../../plugin/handler.js";
import type { HttpEndpointDeps } from "../../plugin/pkg/http-endpoint.js";
import { closeHttp, listenHttp, parseListenAddress } from "../../plugin/pkg/http-endpoint.js";
import type { Setup } from "../../plugin/setup.js";
import { argError, onlyOnce, stanzaError } from "../../plugin/setup.js";
import { systemTimers, type Timers } from "../../server/timers.js";
import { startSelfProbe } from "./self-probe.js";

export interface HealthDeps extends HttpEndpointDeps {
  /** Waits `ms`; injectable so tests need not sleep through a lameduck. */
  sleep?: (ms: number) => Promise<void>;
  /** Where the self-probe's duration and failures are counted (self-probe.ts); without it there is no probe. */
  metrics?: Metrics;
  timers?: Timers;
  /** Where the self-probe's warnings go. */
  errorLog?: (line: string) => void;
}

/**
 * `health [ADDRESS] { lameduck DURATION }`: `/health` answers 200 OK for as long as the process runs. It
 * is not in the query path. On shutdown it waits out the lameduck window first, with DNS still served
 * and /health still OK, so that endpoints can drain before the servers stop.
 */
export const setupHealth: Setup<HealthDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, "health");
  if (stanza.args.length > 1) throw argError(stanza, "health");
  const listen = parseListenAddress(stanza.args[0] ?? ":8080");
  if (!listen) throw stanzaError(stanza, "health", `invalid address '${stanza.args[0]}'`);
  let lameduckMs = 0;
  for (const line of stanza.block) {
    if (line.name !== "lameduck") throw stanzaError(line, "health", `unknown property '${line.name}'`);
    if (line.args.length !== 1) throw argError(line, "health");
    const text = line.args[0] as string;
    const ms = parseGoDuration(text);
    // Upstream's own words, without a position.
    if (ms === undefined)
      throw new PluginError(
        "health",
        `unable to parse lameduck duration value: '${text}' : ${goDurationError(text)}`,
      );
    lameduckMs = ms;
  }
  const sleep = ctx.deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let server: http.Server | undefined;
  let stopProbe = () => {};
  ctx.lifecycle.onStartup(async () => {
    const started = await listenHttp(listen.host, listen.port, "/health", () => ({
      status: 200,
      body: "OK",
    }));
    server = started.server;
    ctx.deps.onHttpListen?.("health", started.port);
    const { metrics } = ctx.deps;
    if (metrics) {
      const host =
        listen.host === "" ? "localhost" : listen.host.includes(":") ? `[${listen.host}]` : listen.host;
      stopProbe = startSelfProbe({
        url: `http://${host}:${started.port}/health`,
        metrics,
        timers: ctx.deps.timers ?? systemTimers,
        now: () => performance.now(),
        log: ctx.deps.errorLog ?? ((line) => console.error(line)),
      });
    }
  });
  ctx.lifecycle.onShutdown(async () => {
    // As CoreDNS: the probe keeps timing /health through the lameduck window, and stops with the endpoint.
    if (lameduckMs > 0) await sleep(lameduckMs);
    stopProbe();
    if (server) await closeHttp(server);
  });
  return {};
};
