// The thin HTTP layer over the pure health handlers: real node:http servers.

import { createServer, type RequestListener, type Server } from "node:http";
import { listenHost } from "@switchyard/kube";
import type { HealthResponse } from "./response.js";
import type { HealthListen, HealthListener } from "./service-health.js";

/** A request listener that answers with `respond(path)`. */
export function healthRequestListener(respond: (path: string) => HealthResponse): RequestListener {
  return (req, res) => {
    const path = new URL(req.url ?? "/", "http://localhost").pathname;
    const r = respond(path);
    res.writeHead(r.status, r.headers);
    res.end(r.body);
  };
}

/**
 * Starts an HTTP server on host:port; resolves once it listens, rejects if it cannot bind. An unspecified
 * host ("", 0.0.0.0, ::) listens on both families, as Go's listener does.
 */
export function listenHTTP(host: string, port: number, listener: RequestListener): Promise<Server> {
  return new Promise((resolve, reject) => {
    const server = createServer(listener);
    server.once("error", reject);
    server.listen(port, listenHost(host), () => {
      server.off("error", reject);
      resolve(server);
    });
  });
}

/** A HealthListen for ServiceHealthServer that binds real ports on `host` ("" = all). */
export function httpHealthListen(host = ""): HealthListen {
  return async (port, respond): Promise<HealthListener> => {
    const server = await listenHTTP(
      host,
      port,
      healthRequestListener(() => respond()),
    );
    return { close: () => new Promise<void>((resolve) => server.close(() => resolve())) };
  };
}
