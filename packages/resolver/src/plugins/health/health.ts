import type * as http from "node:http";
import type { Setup } from "../../plugin/setup.js";
import { argError, onlyOnce, stanzaError } from "../../plugin/setup.js";
import { closeHttp, listenHttp, parseListenAddress } from "../http-endpoint.js";
import { parseDuration } from "../kubernetes/setup.js";

export interface HealthDeps {
  /** Waits `ms`; injectable so tests need not sleep through a lameduck. */
  sleep?: (ms: number) => Promise<void>;
  /** Told where the health and ready endpoints listen (useful with port 0). */
  onHttpListen?: (plugin: string, port: number) => void;
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
    const ms = parseDuration(line.args[0] ?? "");
    if (line.args.length !== 1 || ms === undefined)
      throw stanzaError(line, "health", `invalid lameduck duration '${line.args.join(" ")}'`);
    lameduckMs = ms;
  }
  const sleep = ctx.deps.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  let server: http.Server | undefined;
  ctx.lifecycle.onStartup(async () => {
    const started = await listenHttp(listen.host, listen.port, "/health", () => ({
      status: 200,
      body: "OK",
    }));
    server = started.server;
    ctx.deps.onHttpListen?.("health", started.port);
  });
  ctx.lifecycle.onShutdown(async () => {
    if (lameduckMs > 0) await sleep(lameduckMs);
    if (server) await closeHttp(server);
  });
  return {};
};
