import { existsSync, readFileSync } from "node:fs";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { pageHtml, uplotCss, vendorModules } from "./page-html.js";

export interface DashboardServerOptions {
  host: string;
  /** 0 for any free port. */
  port: number;
  title: string;
  /** Where the compiled page scripts are (lab/dist/dashboard/page). */
  pageDir: string;
  /** The view as JSON, now. */
  current(): string;
  /** Calls `listener` with the view's JSON on every change until the returned function is called. */
  subscribe(listener: (json: string) => void): () => void;
}

export interface DashboardServer {
  url: string;
  close(): Promise<void>;
}

const types: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".mjs": "text/javascript; charset=utf-8",
  ".map": "application/json; charset=utf-8",
  ".css": "text/css; charset=utf-8",
};

/** The page's third-party files, from node_modules as Node resolves them (no copy, no CDN). */
function vendorFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const m of [...Object.values(vendorModules), uplotCss])
    files.set(m.url, fileURLToPath(import.meta.resolve(m.specifier)));
  return files;
}

function send(res: ServerResponse, status: number, type: string, body: string | Buffer): void {
  res.writeHead(status, { "content-type": type, "cache-control": "no-store" });
  res.end(body);
}

function sendFile(res: ServerResponse, file: string): void {
  const ext = file.slice(file.lastIndexOf("."));
  if (existsSync(file)) send(res, 200, types[ext] ?? "application/octet-stream", readFileSync(file));
  else send(res, 404, "text/plain", "not found\n");
}

/** Server-sent events: the whole view at once, then on every change; a comment now and then keeps it open. */
function streamEvents(req: IncomingMessage, res: ServerResponse, o: DashboardServerOptions): void {
  res.writeHead(200, {
    "content-type": "text/event-stream",
    "cache-control": "no-store",
    connection: "keep-alive",
  });
  const push = (json: string) => res.write(`event: view\ndata: ${json}\n\n`);
  res.write("retry: 2000\n\n");
  push(o.current());
  const unsubscribe = o.subscribe(push);
  const ping = setInterval(() => res.write(": ping\n\n"), 15_000);
  req.on("close", () => {
    clearInterval(ping);
    unsubscribe();
  });
}

function route(
  req: IncomingMessage,
  res: ServerResponse,
  o: DashboardServerOptions,
  vendor: Map<string, string>,
  built: boolean,
): void {
  const path = new URL(req.url ?? "/", "http://dashboard").pathname;
  const vendored = vendor.get(path);
  const page = /^\/app\/([\w-]+\.js(?:\.map)?)$/.exec(path)?.[1];
  if (path === "/") send(res, 200, "text/html; charset=utf-8", pageHtml(o.title, built));
  else if (path === "/api/view") send(res, 200, "application/json", o.current());
  else if (path === "/api/events") streamEvents(req, res, o);
  else if (vendored) sendFile(res, vendored);
  else if (page) sendFile(res, join(o.pageDir, page));
  else send(res, 404, "text/plain", "not found\n");
}

/**
 * The dashboard's HTTP server: the page, its scripts, the view as JSON (/api/view) and as a stream of
 * server-sent events (/api/events). Read-only, and it answers only requests addressed to the host it listens
 * on, so that another site in the browser cannot read the lab through a DNS name pointed at 127.0.0.1.
 */
export async function serveDashboard(o: DashboardServerOptions): Promise<DashboardServer> {
  const vendor = vendorFiles();
  const built = existsSync(join(o.pageDir, "main.js"));
  let hostHeader = "";
  const server = createServer((req, res) => {
    const allowed = [hostHeader, hostHeader.replace(/^127\.0\.0\.1:/, "localhost:")];
    if (req.method !== "GET") send(res, 405, "text/plain", "only GET\n");
    else if (!allowed.includes(req.headers.host ?? "")) send(res, 421, "text/plain", "wrong host\n");
    else route(req, res, o, vendor, built);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) =>
      reject(
        err.code === "EADDRINUSE"
          ? new Error(`dashboard: ${o.host}:${o.port} is in use; pick another --port`)
          : err,
      ),
    );
    server.listen(o.port, o.host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  const host = o.host.includes(":") ? `[${o.host}]` : o.host;
  hostHeader = `${host}:${port}`;
  return {
    url: `http://${hostHeader}/`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
