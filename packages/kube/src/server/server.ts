import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type Registry, register } from "prom-client";
import { discardLogger, type Logger } from "../log/logger.js";
import { type HealthCheck, HealthChecks, renderResults } from "./health-checks.js";
import { listenHost } from "./listen-host.js";

export interface ComponentServerOptions {
  /** 127.0.0.1 unless set; metrics and health are not for the world by default. */
  host?: string;
  /** 0 picks a free port. */
  port: number;
  /** prom-client's default registry unless set. */
  registry?: Registry;
  logger?: Logger;
}

/**
 * The one HTTP server every component runs: /metrics, /healthz, /livez and
 * /readyz (plus /livez/<check> and /readyz/<check>). Liveness checks also
 * count for readiness and /healthz, as in the Kubernetes components.
 */
export class ComponentServer {
  readonly #o: ComponentServerOptions;
  readonly #registry: Registry;
  readonly #log: Logger;
  readonly #live = new HealthChecks("livez");
  readonly #ready = new HealthChecks("readyz");
  #server: Server | undefined;

  constructor(options: ComponentServerOptions) {
    this.#o = options;
    this.#registry = options.registry ?? register;
    this.#log = options.logger ?? discardLogger;
    this.#live.add("ping", () => undefined);
  }

  /** A check for /livez, /healthz and /readyz: failing means "restart me". */
  addLivenessCheck(name: string, check: HealthCheck): void {
    this.#live.add(name, check);
  }

  /** A check for /readyz only: failing means "do not send me work yet". */
  addReadinessCheck(name: string, check: HealthCheck): void {
    this.#ready.add(name, check);
  }

  /** Listens; rejects with one line naming the address when it is taken. */
  async start(): Promise<AddressInfo> {
    const host = this.#o.host ?? "127.0.0.1";
    const server = createServer((req, res) => {
      this.#handle(req, res).catch((err: unknown) => {
        this.#log.error("request failed", { path: req.url, error: err });
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    await new Promise<void>((resolve, reject) => {
      server.once("error", (err: NodeJS.ErrnoException) => {
        const where = `${host.includes(":") ? `[${host}]` : host}:${this.#o.port}`;
        if (err.code === "EADDRINUSE")
          reject(new Error(`cannot serve metrics/health on ${where}: address already in use`));
        else reject(new Error(`cannot serve metrics/health on ${where}: ${err.message}`));
      });
      server.listen(this.#o.port, listenHost(host), () => resolve());
    });
    this.#server = server;
    const address = server.address() as AddressInfo;
    this.#log.info("serving metrics and health", { address: `${address.address}:${address.port}` });
    return address;
  }

  async stop(): Promise<void> {
    const server = this.#server;
    this.#server = undefined;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD" }).end();
      return;
    }
    if (url.pathname === "/metrics") {
      const body = await this.#registry.metrics();
      res.writeHead(200, { "Content-Type": this.#registry.contentType }).end(body);
      return;
    }
    const [, endpoint, only] = url.pathname.split("/");
    if (endpoint !== "healthz" && endpoint !== "livez" && endpoint !== "readyz") {
      res.writeHead(404, { "Content-Type": "text/plain" }).end("not found\n");
      return;
    }
    const groups = endpoint === "readyz" ? [this.#live, this.#ready] : [this.#live];
    if (only && !groups.some((g) => g.has(only))) {
      res.writeHead(404, { "Content-Type": "text/plain" }).end(`no check named "${only}"\n`);
      return;
    }
    const exclude = url.searchParams.getAll("exclude");
    const results = (await Promise.all(groups.map((g) => g.run(exclude, only)))).flat();
    const ok = results.every((r) => r.ok);
    if (!ok) this.#log.info(`${endpoint} check failed`, { failed: results.filter((r) => !r.ok) });
    const body = renderResults(endpoint, results, url.searchParams.has("verbose"));
    res.writeHead(ok ? 200 : 500, { "Content-Type": "text/plain; charset=utf-8" }).end(body);
  }
}
