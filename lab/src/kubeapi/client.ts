import { readFileSync } from "node:fs";
import { Agent, request } from "node:https";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parseApiJson } from "@switchyard/kube";

/**
 * The lab's own small REST client: what the node agent and the CLI need is a handful of JSON calls and one
 * watch stream. It decodes answers as @switchyard/kube does (null fields read as absent).
 */
export interface Credentials {
  server: string;
  ca: Buffer;
  cert: Buffer;
  key: Buffer;
}

/** The admin identity of a control plane's state folder (client certificate in system:masters). */
export function adminCredentials(server: string, controlPlaneDir: string): Credentials {
  const pki = join(controlPlaneDir, "pki");
  return {
    server,
    ca: readFileSync(join(pki, "ca.crt")),
    cert: readFileSync(join(pki, "admin.crt")),
    key: readFileSync(join(pki, "admin.key")),
  };
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export const isNotFound = (err: unknown) => err instanceof ApiError && err.status === 404;
export const isConflict = (err: unknown) => err instanceof ApiError && err.status === 409;

export interface WatchEvent<T> {
  type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK" | "ERROR";
  object: T;
}

export const contentTypes = {
  json: "application/json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
} as const;

export class KubeClient {
  private readonly agent: Agent;

  constructor(private readonly creds: Credentials) {
    this.agent = new Agent({ keepAlive: true, ca: creds.ca, cert: creds.cert, key: creds.key });
  }

  get server(): string {
    return this.creds.server;
  }

  async call<T>(
    method: string,
    path: string,
    body?: unknown,
    contentType: string = contentTypes.json,
  ): Promise<T> {
    const res = await this.open(method, path, body, contentType, 30_000);
    const text = await readAll(res);
    const status = res.statusCode ?? 0;
    if (status >= 200 && status < 300) return (text ? parseApiJson(text) : {}) as T;
    let reason = "";
    let message = text.trim();
    try {
      const parsed = JSON.parse(text) as { reason?: string; message?: string };
      reason = parsed.reason ?? "";
      message = parsed.message ?? message;
    } catch {}
    throw new ApiError(status, reason, `${method} ${path}: ${status} ${message}`);
  }

  /** A watch stream; ends when the server closes it or the signal aborts. */
  async *watch<T>(path: string, resourceVersion: string, signal: AbortSignal): AsyncIterable<WatchEvent<T>> {
    const sep = path.includes("?") ? "&" : "?";
    const url = `${path}${sep}watch=true&allowWatchBookmarks=true&resourceVersion=${encodeURIComponent(resourceVersion)}&timeoutSeconds=300`;
    const res = await this.open("GET", url, undefined, contentTypes.json, 0, signal);
    if ((res.statusCode ?? 0) !== 200) {
      const text = await readAll(res);
      throw new ApiError(res.statusCode ?? 0, "", `watch ${path}: ${res.statusCode} ${text.trim()}`);
    }
    const lines = createInterface({ input: res, crlfDelay: Number.POSITIVE_INFINITY });
    try {
      for await (const line of lines) {
        if (line.trim()) yield parseApiJson(line) as WatchEvent<T>;
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    } finally {
      res.destroy();
    }
  }

  close(): void {
    this.agent.destroy();
  }

  private open(
    method: string,
    path: string,
    body: unknown,
    contentType: string,
    timeoutMs: number,
    signal?: AbortSignal,
  ): Promise<import("node:http").IncomingMessage> {
    return new Promise((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(new URL(path, this.creds.server), {
        method,
        agent: this.agent,
        headers: {
          accept: "application/json",
          "user-agent": "switchyard-lab",
          ...(payload ? { "content-type": contentType, "content-length": Buffer.byteLength(payload) } : {}),
        },
        ...(signal ? { signal } : {}),
        ...(timeoutMs > 0 ? { timeout: timeoutMs } : {}),
      });
      req.on("timeout", () => req.destroy(new Error(`${method} ${path}: timed out`)));
      req.on("error", reject);
      req.on("response", resolve);
      req.end(payload);
    });
  }
}

function readAll(res: import("node:http").IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    res.setEncoding("utf8");
    res.on("data", (c: string) => {
      text += c;
    });
    res.on("end", () => resolve(text));
    res.on("error", reject);
  });
}
