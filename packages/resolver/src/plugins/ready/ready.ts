import type * as http from "node:http";
import type { HttpEndpointDeps } from "../../plugin/pkg/http-endpoint.js";
import { closeHttp, listenHttp, parseListenAddress } from "../../plugin/pkg/http-endpoint.js";
import type { Readiness, Setup } from "../../plugin/setup.js";
import { argError, onlyOnce, stanzaError } from "../../plugin/setup.js";

/**
 * Whether every reporter is ready: 200 `OK`, or 503 with the names of those that are not (CoreDNS's body),
 * followed by one line per cause a reporter gives, e.g. `kubernetes: endpointslices: list/watch failed: …`.
 * Once all have been ready it stays OK (CoreDNS's default `monitor until-ready`).
 */
export function readiness(
  reporters: readonly Readiness[],
  state: { everReady: boolean },
): { status: number; body: string } {
  if (state.everReady) return { status: 200, body: "OK" };
  const waiting = reporters.filter((r) => !r.ready());
  if (waiting.length > 0) {
    const names = [...new Set(waiting.map((r) => r.name))].sort().join(",");
    const causes = waiting.flatMap((r) => (r.notReadyReasons?.() ?? []).map((why) => `${r.name}: ${why}`));
    return { status: 503, body: [names, ...new Set(causes)].join("\n") };
  }
  state.everReady = true;
  return { status: 200, body: "OK" };
}

/** `ready [ADDRESS]`: `/ready` on :8181. It closes first on shutdown, before health's lameduck wait. */
export const setupReady: Setup<HttpEndpointDeps> = (ctx) => {
  const stanza = onlyOnce(ctx, "ready");
  if (stanza.args.length > 1) throw argError(stanza, "ready");
  const listen = parseListenAddress(stanza.args[0] ?? ":8181");
  if (!listen) throw stanzaError(stanza, "ready", `invalid address '${stanza.args[0]}'`);
  const first = stanza.block[0];
  if (first) throw stanzaError(first, "ready", `option '${first.name}' is not supported yet`);
  const state = { everReady: false };
  let server: http.Server | undefined;
  ctx.lifecycle.onStartup(async () => {
    const started = await listenHttp(listen.host, listen.port, "/ready", () =>
      readiness(ctx.allReadiness(), state),
    );
    server = started.server;
    ctx.deps.onHttpListen?.("ready", started.port);
  });
  ctx.lifecycle.onShutdown(async () => {
    if (server) await closeHttp(server);
  });
  return {};
};
