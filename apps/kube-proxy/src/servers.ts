// kube-proxy's two listeners: metrics (default 127.0.0.1:10249, loopback only, as upstream)
// with /metrics, /healthz and /proxyMode; and health (default 0.0.0.0:10256, as upstream)
// with /healthz and /livez from ProxyHealth, which node load balancers probe.
import type { Server } from "node:http";
import type { Logger } from "@switchyard/kube";
import { healthRequestListener, listenHTTP, type ProxyHealth, type ProxyMode } from "@switchyard/proxier";
import type { Registry } from "prom-client";
import { parseHostPort } from "./cli/flags.js";

export interface Servers {
  /** Where each listens; the configured address while a bind is still being retried. */
  readonly metricsAddress: string | undefined;
  readonly healthzAddress: string | undefined;
  stop(): Promise<void>;
}

/** Upstream retries a server that could not bind every 5 s (server.go: wait.Until(fn, 5*time.Second, ...)). */
export const BIND_RETRY_MS = 5000;

function format(server: Server): string {
  const a = server.address();
  if (a === null || typeof a === "string") return String(a);
  return a.address.includes(":") ? `[${a.address}]:${a.port}` : `${a.address}:${a.port}`;
}

type Listener = Parameters<typeof listenHTTP>[2];

async function listen(what: string, address: string, listener: Listener) {
  const hp = parseHostPort(address);
  if (hp === undefined) throw new Error(`invalid ${what} address ${address}`);
  try {
    return await listenHTTP(hp.host || "0.0.0.0", hp.port, listener);
  } catch (err) {
    throw new Error(`cannot serve ${what} on ${address}: ${(err as Error).message}`);
  }
}

function metricsListener(o: {
  registry: Registry;
  mode: ProxyMode;
  configz?: Record<string, unknown>;
}): Listener {
  return (req, res) => {
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
    } else if (path === "/configz" && o.configz) {
      // component-base's configz: the configuration under its API group's name.
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ "kubeproxy.config.k8s.io": o.configz }));
    } else {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("404 page not found\n");
    }
  };
}

export interface ServerOptions {
  metricsBindAddress: string;
  healthzBindAddress: string;
  registry: Registry;
  health: ProxyHealth;
  mode: ProxyMode;
  /** Exit when a port cannot be bound, instead of retrying it (bindAddressHardFail). */
  bindAddressHardFail: boolean;
  logger: Logger;
  /** Served on /configz (the v1alpha1 configuration), when given. */
  configz?: Record<string, unknown>;
  /** Injected by tests. */
  retryMs?: number;
}

/**
 * Starts both listeners. As upstream: a server that cannot bind (a port taken, an address not on the node) is
 * logged and tried again every 5 s while the proxy runs, so it serves once the port frees; with
 * bindAddressHardFail the failure is fatal instead (startServers rejects and the proxy exits).
 */
export async function startServers(o: ServerOptions): Promise<Servers> {
  const started: Server[] = [];
  const timers = new Set<NodeJS.Timeout>();
  let stopped = false;
  const stop = async () => {
    stopped = true;
    for (const t of timers) clearTimeout(t);
    await Promise.all(started.map((s) => new Promise((r) => s.close(r))));
  };
  const serve = async (what: string, address: string, listener: Listener): Promise<string | undefined> => {
    if (address === "") return undefined;
    try {
      const server = await listen(what, address, listener);
      started.push(server);
      return format(server);
    } catch (err) {
      if (o.bindAddressHardFail) throw err;
      o.logger.error(`${what === "healthz" ? "Healthz" : "Metrics"} server failed`, {
        err: (err as Error).message,
      });
      const retry = () => {
        if (stopped) return;
        listen(what, address, listener).then(
          (server) => {
            if (stopped) server.close();
            else started.push(server);
          },
          () => timers.add(setTimeout(retry, o.retryMs ?? BIND_RETRY_MS)),
        );
      };
      timers.add(setTimeout(retry, o.retryMs ?? BIND_RETRY_MS));
      return address;
    }
  };
  try {
    const metricsAddress = await serve("metrics", o.metricsBindAddress, metricsListener(o));
    const healthzAddress = await serve(
      "healthz",
      o.healthzBindAddress,
      healthRequestListener((p) => o.health.handle(p)),
    );
    return { metricsAddress, healthzAddress, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
