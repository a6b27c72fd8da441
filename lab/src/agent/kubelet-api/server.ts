import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { Duplex } from "node:stream";
import type { Logger } from "@switchyard/kube";
import { authenticatedUser } from "./authenticate.js";
import { authorizeRequest, type WebhookAuthorizer } from "./authorize.js";
import { type PodSource, serveContainerLogs } from "./container-logs.js";
import { listenInNetns } from "./netns-listener.js";
import { serveNodeLogs } from "./node-logs.js";
import { serveStreamingUpgrade } from "./streaming-upgrade.js";

type Handler = (req: IncomingMessage, res: ServerResponse, url: URL, pods: PodSource) => void;

const plain = (res: ServerResponse, status: number, body: string) => {
  res.writeHead(status, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(body);
};

const notServedYet: Handler = (_req, res, url) =>
  plain(res, 501, `${url.pathname.split("/")[1]} is not served by the switchyard lab's node agent yet`);

/** exec, attach and portForward arrive as upgrades (streaming-upgrade.ts); a plain request to them is refused. */
const upgradeRequired: Handler = (_req, res) => plain(res, 400, "Upgrade request required");

/**
 * The kubelet's endpoints by their first path segment, for plain requests. The streaming ones (exec, attach,
 * portForward) are served from the server's `upgrade` event; run (the old one-shot exec) answers 501.
 */
export const routes: Record<string, Handler> = {
  healthz: (_req, res) => plain(res, 200, "ok"),
  pods: (_req, res, _url, pods) => {
    res.writeHead(200, { "Content-Type": "application/json" });
    res.end(JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: {}, items: pods.pods() }));
  },
  containerLogs: serveContainerLogs,
  exec: upgradeRequired,
  attach: upgradeRequired,
  portForward: upgradeRequired,
  run: notServedYet,
};

export interface KubeletApiOptions {
  /** The node's namespace and address: where the apiserver dials the kubelet. */
  netns: string;
  ip: string;
  port: number;
  /** PEM contents: the node's serving certificate and key, and the CA whose client certificates are accepted. */
  tls: { cert: string; key: string; ca: string };
  pods: PodSource;
  /** What /logs/ serves as the node's /var/log (node-logs.ts); undefined: /logs/ is a 404. */
  logsDir?: string;
  /** The kubelet's --authorization-mode=Webhook (authorize.ts); undefined: AlwaysAllow. */
  authorizer?: Pick<WebhookAuthorizer, "authorize">;
  log: Logger;
}

/** One plain request: authenticated, authorized, then routed, in the kubelet's order. */
async function serveRequest(req: IncomingMessage, res: ServerResponse, o: KubeletApiOptions): Promise<void> {
  const user = authenticatedUser(req.socket);
  if (!user) return plain(res, 401, "Unauthorized");
  const url = new URL(req.url ?? "/", "https://kubelet");
  const decision = await authorizeRequest(user, req.method ?? "", url, o.authorizer);
  if (!decision.allowed) return plain(res, decision.status, decision.body);
  const first = url.pathname.split("/")[1] ?? "";
  if (first === "logs" && o.logsDir) {
    if (req.method !== "GET") return plain(res, 405, "Method Not Allowed");
    return serveNodeLogs(res, o.logsDir, url.pathname);
  }
  const handler = routes[first];
  if (!handler) return plain(res, 404, "404 page not found");
  if (req.method !== "GET" && handler !== notServedYet) return plain(res, 405, "405: Method Not Allowed");
  handler(req, res, url, o.pods);
}

/**
 * The kubelet API over HTTPS on nodeIP:port inside the node's namespace. Clients authenticate with a certificate
 * of the lab CA that names a user in its CN (the kubelet's --client-ca-file x509 authentication, authenticate.ts);
 * anyone else gets 401 Unauthorized, as the kubelet answers. Then each request is authorized as the kubelet's filter does (authorize.ts): a 403 with the
 * kubelet's words when the apiserver allows none of its subresources.
 */
export async function startKubeletApi(o: KubeletApiOptions): Promise<Server> {
  const server = createServer(
    { cert: o.tls.cert, key: o.tls.key, ca: o.tls.ca, requestCert: true, rejectUnauthorized: false },
    (req, res) => {
      void serveRequest(req, res, o).catch((err: Error) => {
        o.log.warn("kubelet API request failed", { path: req.url, error: err.message });
        if (!res.headersSent) plain(res, 500, err.message);
        else res.destroy();
      });
    },
  );
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    void serveStreamingUpgrade(req, socket, head, o.pods, o.log, o.authorizer).catch((err: Error) => {
      o.log.warn("kubelet API upgrade failed", { path: req.url, error: err.message });
      socket.destroy();
    });
  });
  const socket = await listenInNetns(o.netns, o.ip, o.port);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socket, () => resolve());
  });
  return server;
}
