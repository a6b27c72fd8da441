import { readFileSync } from "node:fs";
import { get as httpGet } from "node:http";
import { request as httpsRequest } from "node:https";

export interface ClientTls {
  ca: string;
  cert: string;
  key: string;
  /** The controller-manager and scheduler serve self-signed certificates; their /healthz is public anyway. */
  insecure?: boolean;
}

/** GET a URL; resolves with status and body, or with status 0 and the error when nothing answers. */
export function probe(
  url: string,
  tls?: ClientTls,
  timeoutMs = 2000,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve) => {
    const done = (status: number, body: string) => resolve({ status, body });
    const onResponse = (res: import("node:http").IncomingMessage) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => done(res.statusCode ?? 0, body));
      res.on("error", (e) => done(0, e.message));
    };
    const req = url.startsWith("https:")
      ? httpsRequest(
          url,
          {
            method: "GET",
            timeout: timeoutMs,
            ...(tls
              ? { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key) }
              : {}),
            ...(tls?.insecure ? { rejectUnauthorized: false } : {}),
          },
          onResponse,
        )
      : httpGet(url, { timeout: timeoutMs }, onResponse);
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", (e) => done(0, e.message));
    if (url.startsWith("https:")) req.end();
  });
}
