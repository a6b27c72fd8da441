// Per-Service health checks for externalTrafficPolicy: Local. Each such Service has a
// healthCheckNodePort on which this node answers 200 while it has local ready endpoints
// (and the proxy is healthy), so external load balancers only send traffic to nodes that
// can serve it without a second hop.
import type { HealthResponse } from "./response.js";
import { JSON_HEADERS } from "./response.js";

/** A bound server; closing it stops answering on its port. */
export interface HealthListener {
  close(): Promise<void>;
}

/** Opens a server on `port` that answers every request with `respond()`. */
export type HealthListen = (port: number, respond: () => HealthResponse) => Promise<HealthListener>;

export interface ServiceHealthServerOptions {
  readonly listen: HealthListen;
  /** The proxy's own health (ProxyHealth.isHealthy). */
  readonly proxyHealthy: () => boolean;
  /** A port that could not be opened; the other Services are still served. */
  readonly onListenError?: (service: string, port: number, err: unknown) => void;
}

interface Instance {
  readonly port: number;
  readonly listener: HealthListener;
}

export class ServiceHealthServer {
  readonly #o: ServiceHealthServerOptions;
  readonly #instances = new Map<string, Instance>();
  #endpoints: ReadonlyMap<string, number> = new Map();

  constructor(options: ServiceHealthServerOptions) {
    this.#o = options;
  }

  /**
   * Makes the served set equal `ports` ("ns/name" → healthCheckNodePort): closes servers of
   * Services that left or changed port, opens the new ones. A failed bind is reported and
   * retried on the next call.
   */
  async syncServices(ports: ReadonlyMap<string, number>): Promise<void> {
    for (const [svc, inst] of [...this.#instances]) {
      if (ports.get(svc) === inst.port) continue;
      this.#instances.delete(svc);
      await inst.listener.close();
    }
    for (const [svc, port] of ports) {
      if (this.#instances.has(svc)) continue;
      try {
        const listener = await this.#o.listen(port, () => this.respond(svc));
        this.#instances.set(svc, { port, listener });
      } catch (e) {
        this.#o.onListenError?.(svc, port, e);
      }
    }
  }

  /** Local ready endpoint counts by "ns/name"; Services not listed have none. */
  syncEndpoints(counts: ReadonlyMap<string, number>): void {
    this.#endpoints = new Map(counts);
  }

  /** Services currently served. */
  get services(): ReadonlyMap<string, number> {
    return new Map([...this.#instances].map(([svc, inst]) => [svc, inst.port]));
  }

  /** The answer for one Service, in kube-proxy's format (tab-indented JSON). */
  respond(svc: string): HealthResponse {
    const [namespace = "", name = ""] = svc.split("/");
    const count = this.#endpoints.get(svc) ?? 0;
    const proxyHealthy = this.#o.proxyHealthy();
    const body = [
      "{",
      '\t"service": {',
      `\t\t"namespace": ${JSON.stringify(namespace)},`,
      `\t\t"name": ${JSON.stringify(name)}`,
      "\t},",
      `\t"localEndpoints": ${count},`,
      `\t"serviceProxyHealthy": ${proxyHealthy}`,
      "}",
    ].join("\n");
    return { status: count !== 0 && proxyHealthy ? 200 : 503, headers: JSON_HEADERS, body };
  }

  async close(): Promise<void> {
    await this.syncServices(new Map());
  }
}
