import * as http from "node:http";
import * as https from "node:https";
import { type Clock, realClock } from "../util/clock.js";
import { Deadline, TimeoutError } from "../util/deadline.js";
import { ApiError } from "./api-error.js";
import {
  type DeleteOptions,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  patchContentTypes,
  type RestClient,
  type WatchOptions,
  type WriteOptions,
} from "./client.js";
import type { ClusterAccess } from "./cluster-access.js";
import { parseApiJson } from "./decode.js";
import { ndjson } from "./ndjson.js";
import type { KubeList, KubeObject, WatchEvent } from "./object.js";
import { queryString, resourcePath } from "./paths.js";
import { apiVersionOf, type ResourceDescriptor } from "./resources.js";

/** What a watch on a path (`HttpRestClient.watchPath`) takes besides the path and its selectors. */
export type PathWatchOptions = Pick<
  WatchOptions,
  "resourceVersion" | "timeoutSeconds" | "allowWatchBookmarks" | "signal"
>;

export interface HttpRestClientOptions {
  userAgent?: string;
  /**
   * The limit of every request, from sending to the end of the response body, the retry on a reset connection
   * included; for a watch, the limit of its response headers, and the time the server gets past `timeoutSeconds`
   * to close the stream. 30 s by default; 0 for none.
   */
  requestTimeoutMs?: number;
  /** Times the limits; realClock by default. */
  clock?: Clock;
  /** Told about every request once it ended, as client-go's metrics hooks are (see RequestOutcome). */
  onRequest?: (outcome: RequestOutcome) => void;
}

/** One finished request, for client metrics. */
export interface RequestOutcome {
  method: string;
  /** A watch is reported once the server accepted or refused it; `seconds` then covers only that. */
  watch: boolean;
  /** The HTTP status as text, or `<error>` when no response came (client-go's label). */
  code: string;
  /** From sending to the end of the body (for a watch, to the response headers). */
  seconds: number;
}

interface Request {
  method: string;
  path: string;
  body?: unknown;
  contentType?: string;
  /** The caller's signal merged with the request's time limit (see #json). */
  signal?: AbortSignal;
}

/**
 * The REST client over node:http(s). The configuration says where the server is and how each request
 * authenticates (kubeconfig.ts for kubeconfig files, in-cluster.ts for a pod's service account); requests,
 * keep-alive and the watch stream are ours, on raw JSON.
 */
export class HttpRestClient implements RestClient {
  readonly server: URL;
  readonly #kc: ClusterAccess;
  readonly #userAgent: string;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #onRequest: ((outcome: RequestOutcome) => void) | undefined;
  #agent: http.Agent | undefined;
  #agentKey = "";

  constructor(kc: ClusterAccess, options: HttpRestClientOptions = {}) {
    const cluster = kc.getCurrentCluster();
    if (!cluster) throw new Error("kubeconfig has no current cluster");
    this.server = new URL(cluster.server);
    this.#kc = kc;
    this.#userAgent = options.userAgent ?? "switchyard";
    this.#timeoutMs = options.requestTimeoutMs ?? 30_000;
    this.#clock = options.clock ?? realClock;
    this.#onRequest = options.onRequest;
  }

  async get<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    name: string,
    opts: { namespace?: string; signal?: AbortSignal } = {},
  ): Promise<T> {
    return this.#json<T>({
      method: "GET",
      path: resourcePath(res, opts.namespace, name),
      signal: opts.signal,
    });
  }

  async list<T extends KubeObject>(res: ResourceDescriptor<T>, opts: ListOptions = {}): Promise<KubeList<T>> {
    const query = queryString({
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
      limit: opts.limit,
      continue: opts.continue,
      resourceVersion: opts.resourceVersion,
      resourceVersionMatch: opts.resourceVersionMatch,
    });
    return this.#json<KubeList<T>>({
      method: "GET",
      path: resourcePath(res, opts.namespace) + query,
      signal: opts.signal,
    });
  }

  async create<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    obj: T,
    opts: WriteOptions = {},
  ): Promise<T> {
    const ns = opts.namespace ?? obj.metadata?.namespace;
    return this.#json<T>({
      method: "POST",
      path: resourcePath(res, ns) + writeQuery(opts),
      body: withTypeMeta(res, obj),
      signal: opts.signal,
    });
  }

  async update<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    obj: T,
    opts: WriteOptions = {},
  ): Promise<T> {
    const ns = opts.namespace ?? obj.metadata?.namespace;
    const name = obj.metadata?.name;
    if (!name) throw new Error(`update ${res.resource}: object has no metadata.name`);
    return this.#json<T>({
      method: "PUT",
      path: resourcePath(res, ns, name) + writeQuery(opts),
      body: withTypeMeta(res, obj),
      signal: opts.signal,
    });
  }

  async patch<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    name: string,
    type: PatchType,
    patch: unknown,
    opts: PatchOptions = {},
  ): Promise<T> {
    if (type === "apply" && !opts.fieldManager) {
      throw new Error(`apply ${res.resource}/${name}: server-side apply needs a fieldManager`);
    }
    const query = queryString({
      fieldManager: opts.fieldManager,
      dryRun: opts.dryRun ? "All" : undefined,
      force: opts.force,
    });
    return this.#json<T>({
      method: "PATCH",
      path: resourcePath(res, opts.namespace, name) + query,
      // JSON is valid YAML, so apply patches are sent as JSON too.
      body: patch,
      contentType: patchContentTypes[type],
      signal: opts.signal,
    });
  }

  async delete(res: ResourceDescriptor, name: string, opts: DeleteOptions = {}): Promise<void> {
    const preconditions =
      opts.resourceVersion || opts.uid ? { resourceVersion: opts.resourceVersion, uid: opts.uid } : undefined;
    await this.#json({
      method: "DELETE",
      path: resourcePath(res, opts.namespace, name),
      body: {
        apiVersion: "v1",
        kind: "DeleteOptions",
        gracePeriodSeconds: opts.gracePeriodSeconds,
        propagationPolicy: opts.propagationPolicy,
        preconditions,
      },
      signal: opts.signal,
    });
  }

  async *watch<T extends KubeObject>(
    res: ResourceDescriptor<T>,
    opts: WatchOptions = {},
  ): AsyncGenerator<WatchEvent<T>> {
    const query = queryString({
      watch: true,
      allowWatchBookmarks: opts.allowWatchBookmarks ?? true,
      resourceVersion: opts.resourceVersion,
      timeoutSeconds: opts.timeoutSeconds,
      labelSelector: opts.labelSelector,
      fieldSelector: opts.fieldSelector,
    });
    const path = resourcePath(res, opts.namespace) + query;
    yield* await this.#openWatch<T>(path, opts, `watch ${res.resource}`);
  }

  /**
   * One request on a path of the API, query included (client-go's `AbsPath`), for callers that hold paths
   * rather than resource descriptors: subresources, kinds without a descriptor, the lab's scenarios. The body
   * goes out as JSON under `contentType`; the answer is decoded as every other one, failures are ApiError.
   */
  call<T>(method: string, path: string, body?: unknown, contentType?: string): Promise<T> {
    return this.#json<T>({ method, path, body, contentType });
  }

  /**
   * A watch on a collection path that carries its own selectors (`/api/v1/pods?fieldSelector=…`). Unlike
   * `watch`, it resolves once the server has accepted the watch, so nothing written afterwards is missed;
   * iterate the result, or abort the signal, to let the connection go.
   */
  async watchPath<T extends KubeObject>(
    path: string,
    opts: PathWatchOptions = {},
  ): Promise<AsyncIterable<WatchEvent<T>>> {
    const [base = "", own] = path.split("?", 2);
    const query = queryString({
      watch: true,
      allowWatchBookmarks: opts.allowWatchBookmarks ?? true,
      resourceVersion: opts.resourceVersion,
      timeoutSeconds: opts.timeoutSeconds,
    });
    return this.#openWatch<T>(`${base}${query}${own ? `&${own}` : ""}`, opts, `watch ${base}`);
  }

  // The response headers must come within the request timeout, so a connection that never comes up (a ClusterIP
  // before the node's proxy has rules, a blackholed apiserver) fails and is retried. The stream then runs until the
  // server closes it, which it does after `timeoutSeconds`; a stream still open a request timeout after that (the
  // server, or the path to it, went away without a word) is ended here with an error.
  async #openWatch<T extends KubeObject>(
    path: string,
    opts: PathWatchOptions,
    context: string,
  ): Promise<AsyncGenerator<WatchEvent<T>>> {
    const started = performance.now();
    const limit = new Deadline(this.#clock, opts.signal).arm(this.#timeoutMs, () =>
      this.#timeout(`${context}: no response within`),
    );
    let response: http.IncomingMessage;
    try {
      response = await this.#reported({ method: "GET", path, signal: limit.signal }, started, true, limit);
    } catch (err) {
      limit.clear();
      throw err;
    }
    this.#report("GET", true, String(response.statusCode ?? 0), started);
    const status = response.statusCode ?? 0;
    if (status < 200 || status > 299) {
      const text = await readText(response)
        .catch((err: unknown) => {
          throw limit.expired ?? err;
        })
        .finally(() => limit.clear());
      throw ApiError.fromResponse(status, text, context);
    }
    const streamMs = opts.timeoutSeconds ? opts.timeoutSeconds * 1000 + this.#timeoutMs : 0;
    limit.arm(streamMs, () => this.#timeout(`${context}: not closed by the server within`, streamMs));
    return watchEvents<T>(response, opts.signal, limit);
  }

  // One limit covers the whole exchange, retry and body included, as a Go context does for client-go: a response
  // that starts and then stalls (a blackholed connection mid-body) fails at the same time as one that never starts.
  async #json<T>(req: Request): Promise<T> {
    const started = performance.now();
    const what = `${req.method} ${req.path.split("?")[0]}`;
    let answered = false;
    const limit = new Deadline(this.#clock, req.signal).arm(this.#timeoutMs, () =>
      this.#timeout(answered ? `${what}: response not complete within` : `${what}: no response within`),
    );
    try {
      const response = await this.#reported({ ...req, signal: limit.signal }, started, false, limit);
      answered = true;
      const text = await readText(response).catch((err: unknown) => {
        this.#report(req.method, false, "<error>", started);
        throw limit.expired ?? err;
      });
      const status = response.statusCode ?? 0;
      this.#report(req.method, false, String(status), started);
      if (status < 200 || status > 299) throw ApiError.fromResponse(status, text, what);
      return (text ? parseApiJson(text) : undefined) as T;
    } finally {
      limit.clear();
    }
  }

  #timeout(prefix: string, ms = this.#timeoutMs): TimeoutError {
    return new TimeoutError(`${prefix} ${ms} ms`, ms);
  }

  /** `#send`, reporting a request that got no response at all, and failing with the limit's error once it passed. */
  async #reported(
    req: Request,
    started: number,
    watch: boolean,
    limit: Deadline,
  ): Promise<http.IncomingMessage> {
    try {
      return await this.#send(req);
    } catch (err) {
      this.#report(req.method, watch, "<error>", started);
      throw limit.expired ?? err;
    }
  }

  #report(method: string, watch: boolean, code: string, started: number): void {
    this.#onRequest?.({ method, watch, code, seconds: (performance.now() - started) / 1000 });
  }

  /**
   * One request; sent again once when it failed on a kept-alive connection the server had just closed (reset on
   * a reused socket before any response): the race every keep-alive client meets, which Go's transport (so
   * client-go) retries the same way. A fresh connection's failure is the caller's.
   */
  async #send(req: Request): Promise<http.IncomingMessage> {
    try {
      return await this.#sendOnce(req);
    } catch (err) {
      if (!(err instanceof StaleConnectionError)) throw err;
      if (req.signal?.aborted) throw err.cause;
    }
    try {
      return await this.#sendOnce(req);
    } catch (again) {
      throw again instanceof StaleConnectionError ? again.cause : again;
    }
  }

  // The request's signal carries its time limit (#json, #openWatch): aborting it destroys the request in any phase,
  // connecting included. Node's own request.setTimeout would start only once the socket has connected, so a SYN
  // that goes nowhere would wait out the kernel's SYN retries, two minutes.
  async #sendOnce(req: Request): Promise<http.IncomingMessage> {
    // Auth can change between calls (exec plugins, rotated tokens), so ask the configuration every time.
    const auth: https.RequestOptions = {};
    await this.#kc.applyToHTTPSOptions(auth);
    const body = req.body === undefined ? undefined : JSON.stringify(req.body);
    const headers: http.OutgoingHttpHeaders = {
      ...(auth.headers as http.OutgoingHttpHeaders | undefined),
      Accept: "application/json",
      "User-Agent": this.#userAgent,
    };
    if (body !== undefined) {
      headers["Content-Type"] = req.contentType ?? "application/json";
      headers["Content-Length"] = Buffer.byteLength(body);
    }
    const isHttps = this.server.protocol === "https:";
    const options: https.RequestOptions = {
      protocol: this.server.protocol,
      hostname: this.server.hostname.replace(/^\[|\]$/g, ""),
      port: this.server.port || (isHttps ? 443 : 80),
      path: this.server.pathname.replace(/\/$/, "") + req.path,
      method: req.method,
      headers,
      auth: auth.auth,
      // The configuration's own agent is a proxy's (client-node.ts); otherwise one of ours, kept alive.
      agent: auth.agent instanceof http.Agent ? auth.agent : this.#agentFor(auth, isHttps),
      signal: req.signal,
    };
    return new Promise((resolve, reject) => {
      const request = (isHttps ? https : http).request(options, resolve);
      request.on("error", (err: NodeJS.ErrnoException) => {
        const stale = request.reusedSocket && (err.code === "ECONNRESET" || err.code === "EPIPE");
        reject(stale ? new StaleConnectionError(err) : err);
      });
      request.end(body);
    });
  }

  // One agent for as long as the TLS material stays the same, so connections are kept alive; a configuration that
  // rotates its certificates gets a new one.
  #agentFor(auth: https.RequestOptions, isHttps: boolean): http.Agent {
    const key = [auth.ca, auth.cert, auth.key, auth.rejectUnauthorized, auth.servername]
      .map(String)
      .join("|");
    if (!this.#agent || key !== this.#agentKey) {
      this.#agent?.destroy();
      const common = { keepAlive: true, keepAliveMsecs: 30_000 };
      this.#agent = isHttps
        ? new https.Agent({
            ...common,
            ca: auth.ca,
            cert: auth.cert,
            key: auth.key,
            servername: auth.servername,
            rejectUnauthorized: auth.rejectUnauthorized,
          })
        : new http.Agent(common);
      this.#agentKey = key;
    }
    return this.#agent;
  }

  /** Closes pooled connections. */
  close(): void {
    this.#agent?.destroy();
    this.#agent = undefined;
  }
}

function writeQuery(opts: WriteOptions): string {
  return queryString({ fieldManager: opts.fieldManager, dryRun: opts.dryRun ? "All" : undefined });
}

// The apiserver rejects bodies without apiVersion/kind; fill them in from the descriptor.
function withTypeMeta<T extends KubeObject>(res: ResourceDescriptor<T>, obj: T): T {
  return { ...obj, apiVersion: obj.apiVersion ?? apiVersionOf(res), kind: obj.kind ?? res.kind };
}

async function* watchEvents<T extends KubeObject>(
  response: http.IncomingMessage,
  signal: AbortSignal | undefined,
  limit: Deadline,
): AsyncGenerator<WatchEvent<T>> {
  try {
    for await (const value of ndjson(response)) yield value as WatchEvent<T>;
  } catch (err) {
    // Aborting destroys the socket mid-stream; that is how a caller stops a watch.
    if (signal?.aborted) return;
    throw limit.expired ?? err;
  } finally {
    limit.clear();
    response.destroy();
  }
}

async function readText(response: http.IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of response) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

/** A request that failed on a reused keep-alive socket the server had closed; `cause` is the socket's error. */
class StaleConnectionError extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}
