import { readFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";

export interface ClientTls {
  ca: string;
  cert: string;
  key: string;
  /** The controller-manager and scheduler serve self-signed certificates; their /healthz is public anyway. */
  insecure?: boolean;
}

/**
 * GET a URL, or POST `body` (JSON) to it; resolves with status and body, or with status 0 and the error when
 * nothing answers.
 */
export function probe(
  url: string,
  tls?: ClientTls,
  timeoutMs = 2000,
  body?: string,
): Promise<{ status: number; body: string }> {
  const request = {
    method: body === undefined ? "GET" : "POST",
    timeout: timeoutMs,
    ...(body === undefined ? {} : { headers: { "Content-Type": "application/json" } }),
  };
  return new Promise((resolve) => {
    const done = (status: number, text: string) => resolve({ status, body: text });
    const onResponse = (res: import("node:http").IncomingMessage) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        text += c;
      });
      res.on("end", () => done(res.statusCode ?? 0, text));
      res.on("error", (e) => done(0, e.message));
    };
    const req = url.startsWith("https:")
      ? httpsRequest(
          url,
          {
            ...request,
            ...(tls
              ? { ca: readFileSync(tls.ca), cert: readFileSync(tls.cert), key: readFileSync(tls.key) }
              : {}),
            ...(tls?.insecure ? { rejectUnauthorized: false } : {}),
          },
          onResponse,
        )
      : httpRequest(url, request, onResponse);
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", (e) => done(0, e.message));
    req.end(body);
  });
}
