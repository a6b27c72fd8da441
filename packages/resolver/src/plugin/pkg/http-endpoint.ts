import * as http from "node:http";

/** What the plugins that serve HTTP (health, ready, prometheus) take from the embedding program. */
export interface HttpEndpointDeps {
  /** Told where each endpoint listens (useful with port 0). */
  onHttpListen?: (plugin: string, port: number) => void;
}

/** Splits CoreDNS's `[HOST]:PORT` listen form; an empty host means all addresses. */
export function parseListenAddress(text: string): { host: string; port: number } | undefined {
  const m = /^(.*):(\d{1,5})$/.exec(text);
  if (!m || Number(m[2]) > 65535) return undefined;
  const host = (m[1] ?? "").replace(/^\[(.*)\]$/, "$1");
  return { host, port: Number(m[2]) };
}

/** Starts a small HTTP server answering one path; resolves with the bound port. */
export function listenHttp(
  host: string,
  port: number,
  route: string,
  respond: () => { status: number; body: string },
): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    const { status, body } = req.url === route ? respond() : { status: 404, body: "404 page not found\n" };
    res.writeHead(status, { "content-type": "text/plain; charset=utf-8" });
    res.end(body);
  });
  return listen(server, host, port);
}

export function closeHttp(server: http.Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve) => server.close(() => resolve()));
}

/** Like listenHttp, for answers computed asynchronously (the metrics text). */
export function listenHttpAsync(
  host: string,
  port: number,
  route: string,
  respond: () => Promise<{ status: number; body: string; contentType: string }>,
): Promise<{ server: http.Server; port: number }> {
  const server = http.createServer((req, res) => {
    if (req.url !== route) {
      res.writeHead(404, { "content-type": "text/plain; charset=utf-8" });
      res.end("404 page not found\n");
      return;
    }
    respond().then(
      ({ status, body, contentType }) => {
        res.writeHead(status, { "content-type": contentType });
        res.end(body);
      },
      (err: unknown) => {
        res.writeHead(500, { "content-type": "text/plain; charset=utf-8" });
        res.end(String(err));
      },
    );
  });
  return listen(server, host, port);
}

/** Binds `server`; resolves with it and the bound port, or rejects with the bind error. */
function listen(
  server: http.Server,
  host: string,
  port: number,
): Promise<{ server: http.Server; port: number }> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host === "" ? undefined : host, () => {
      server.off("error", reject);
      const addr = server.address();
      resolve({ server, port: typeof addr === "object" && addr ? addr.port : port });
    });
  });
}
