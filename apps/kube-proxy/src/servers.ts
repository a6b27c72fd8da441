// kube-proxy's two listeners: metrics (default 127.0.0.1:10249, loopback only, as upstream)
// with /metrics, /healthz and /proxyMode; and health (default 0.0.0.0:10256, as upstream)
// with /healthz and /livez from ProxyHealth, which node load balancers probe.
import type { Server } from "node:http";
import { healthRequestListener, listenHTTP, type ProxyHealth, type ProxyMode } from "@switchyard/proxier";
import type { Registry } from "prom-client";
import { parseHostPort } from "./cli/flags.js";

export interface Servers {
  readonly metricsAddress: string | undefined;
  readonly healthzAddress: string | undefined;
  stop(): Promise<void>;
}

function format(server: Server): string {
  const a = server.address();
  if (a === null || typeof a === "string") return String(a);
  return a.address.includes(":") ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

async function listen(what: string, address: string, listener: Parameters<typeof listenHTTP>[2]) {
  const hp = parseHostPort(address);
  if (hp === undefined) throw new Error(`invalid ${what} address ${address}`);
  try {
    return await listenHTTP(hp.host || "0.0.0.0", hp.port, listener);
  } catch (err) {
    throw new Error(`cannot serve ${what} on ${address}: ${(err as Error).message}`);
  }
}

export async function startServers(o: {
  metricsBindAddress: string;
  healthzBindAddress: string;
  registry: Registry;
  health: ProxyHealth;
  mode: ProxyMode;
}): Promise<Servers> {
  const started: Server[] = [];
  const stop = async () => {
    await Promise.all(started.map((s) => new Promise((r) => s.close(r))));
  };
  try {
    if (o.metricsBindAddress !== "") {
      started.push(
        await listen("metrics", o.metricsBindAddress, (req, res) => {
          const path = new URL(req.url ?? "/", "http://localhost").pathname;
          if (path === "/metrics") {
            o.registry.metrics().then((text) => {
              res.writeHead(200, { "Content-Type": o.registry.contentType });
              res.end(text);
            });
          } else if (path === "/proxyMode") {
            res.writeHead(200, { "Content-Type": "text/plain" }).end(o.mode);
          } else if (path === "/healthz") {
            res.writeHead(200, { "Content-Type": "text/plain" }).end("ok");
          } else {
            res.writeHead(404, { "Content-Type": "text/plain" }).end("404 page not found\n");
          }
        }),
      );
    }
    const metricsServer = started[0];
    if (o.healthzBindAddress !== "") {
      started.push(
        await listen(
          "healthz",
          o.healthzBindAddress,
          healthRequestListener((p) => o.health.handle(p)),
        ),
      );
    }
    const healthServer = started.at(-1);
    return {
      metricsAddress: o.metricsBindAddress !== "" && metricsServer ? format(metricsServer) : undefined,
      healthzAddress: o.healthzBindAddress !== "" && healthServer ? format(healthServer) : undefined,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}
