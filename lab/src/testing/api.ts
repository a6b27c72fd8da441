// A minimal client for a test control plane's kube-apiserver: JSON over HTTPS with the admin client
// certificate from its state folder. Tests need only a handful of verbs, so there is no client library.
import { readFileSync } from "node:fs";
import { Agent, request } from "node:https";
import { join } from "node:path";
import { parseApiJson } from "@switchyard/kube";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: string,
    what: string,
  ) {
    super(`${what}: HTTP ${status} ${body.slice(0, 500)}`);
  }
}

export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

export interface Watch {
  stop(): void;
}

export class Api {
  readonly #agent: Agent;
  readonly #server: URL;

  constructor(server: string, stateDir: string) {
    const pki = (file: string) => readFileSync(join(stateDir, "pki", file));
    this.#server = new URL(server);
    this.#agent = new Agent({
      ca: pki("ca.crt"),
      cert: pki("admin.crt"),
      key: pki("admin.key"),
      keepAlive: true,
      maxSockets: 16,
    });
  }

  #open(method: string, path: string, body: unknown, contentType: string) {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    return request({
      agent: this.#agent,
      hostname: this.#server.hostname,
      port: this.#server.port,
      method,
      path,
      headers: {
        accept: "application/json",
        ...(payload === undefined
          ? {}
          : { "content-type": contentType, "content-length": Buffer.byteLength(payload) }),
      },
    }).end(payload);
  }

  async call<T>(method: string, path: string, body?: unknown, contentType = "application/json"): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const req = this.#open(method, path, body, contentType);
      req.on("error", reject);
      req.on("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300) reject(new ApiError(status, text, `${method} ${path}`));
          else resolve(parseApiJson(text) as T);
        });
      });
    });
  }

  get<T>(path: string): Promise<T> {
    return this.call<T>("GET", path);
  }

  post<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("POST", path, body);
  }

  put<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("PUT", path, body);
  }

  mergePatch<T>(path: string, body: unknown): Promise<T> {
    return this.call<T>("PATCH", path, body, "application/merge-patch+json");
  }

  delete<T>(path: string, body?: unknown): Promise<T> {
    return this.call<T>("DELETE", path, body);
  }

  /**
   * Streams watch events for `path` (a collection) from `resourceVersion` on. Resolves once the
   * response headers arrived, so nothing written afterwards is missed.
   */
  watch<T>(path: string, resourceVersion: string, onEvent: (e: WatchEvent<T>) => void): Promise<Watch> {
    const sep = path.includes("?") ? "&" : "?";
    const full = `${path}${sep}watch=1&resourceVersion=${resourceVersion}&allowWatchBookmarks=false`;
    return new Promise<Watch>((resolve, reject) => {
      const req = this.#open("GET", full, undefined, "application/json");
      req.on("error", reject);
      req.on("response", (res) => {
        if ((res.statusCode ?? 0) !== 200) {
          reject(new ApiError(res.statusCode ?? 0, "", `watch ${path}`));
          res.resume();
          return;
        }
        let buffered = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          buffered += chunk;
          let newline = buffered.indexOf("\n");
          while (newline >= 0) {
            const line = buffered.slice(0, newline).trim();
            buffered = buffered.slice(newline + 1);
            if (line !== "") onEvent(parseApiJson(line) as WatchEvent<T>);
            newline = buffered.indexOf("\n");
          }
        });
        // Stopping the watch destroys the socket; that error is expected.
        res.on("error", () => {});
        resolve({ stop: () => req.destroy() });
      });
    });
  }

  close(): void {
    this.#agent.destroy();
  }
}
