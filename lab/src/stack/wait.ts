import { request } from "node:http";
import { realClock, sleep } from "@switchyard/kube";
import type { Progress } from "@switchyard/testbed/progress";

/**
 * Polls `check` until it returns true; its string answers say what is still missing (shown as progress and, at
 * the deadline, in the one-line error). The deadline bounds a hang; nothing measures with it.
 */
export async function waitUntil(
  what: string,
  check: () => Promise<true | string>,
  deadline: number,
  progress?: Progress,
): Promise<void> {
  let last = "";
  for (;;) {
    const result = await check().catch((err: Error) => err.message);
    if (result === true) return;
    last = result;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${last}`);
    progress?.update(`waiting for ${what}: ${last}`);
    await sleep(realClock, 250);
  }
}

/** The status code and body of a plain-HTTP GET, e.g. a proxy's /healthz on its node address. */
export function httpGet(url: string, timeoutMs = 2000): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { timeout: timeoutMs }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => {
        body += c;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url}: timed out`)));
    req.on("error", reject);
    req.end();
  });
}
