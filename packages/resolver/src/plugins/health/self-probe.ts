import * as http from "node:http";
import type { Metrics } from "../../metrics/metrics.js";
import type { Timers } from "../../server/timers.js";

/** CoreDNS's plugin.SlimTimeBuckets: 0.25 ms, ten times larger each, to 2.5 s. */
export const SLIM_TIME_BUCKETS: readonly number[] = [0.00025, 0.0025, 0.025, 0.25, 2.5];

export interface SelfProbeOptions {
  /** The /health URL as the process itself reaches it (localhost for an address without a host). */
  url: string;
  metrics: Metrics;
  timers: Timers;
  now: () => number;
  log: (line: string) => void;
  /** One GET, resolving when the answer's headers came; injectable for tests. */
  get?: (url: string, timeoutMs: number) => Promise<void>;
}

/**
 * Times a GET of the process's own /health every second, as CoreDNS's health plugin does: a local request that
 * is slow or fails says the process is overloaded long before a kubelet's probe gives up. The duration goes to
 * `coredns_health_request_duration_seconds`, each failure to `coredns_health_request_failures_total`, and a
 * failure or a request over 1 s is logged as a warning. One request at a time; returns the stop function.
 */
export function startSelfProbe(o: SelfProbeOptions): () => void {
  const duration = o.metrics.histogram(
    "coredns_health_request_duration_seconds",
    "Histogram of the time (in seconds) each request took.",
    [],
    SLIM_TIME_BUCKETS,
  );
  const failures = o.metrics.counter(
    "coredns_health_request_failures_total",
    "The number of times the health check failed.",
  );
  const get = o.get ?? httpGet;
  let stopped = false;
  let timer: unknown;
  const probe = async () => {
    const start = o.now();
    const failure = await get(o.url, 3000).then(
      () => undefined,
      (err: Error) => err,
    );
    if (stopped) return;
    const seconds = (o.now() - start) / 1000;
    duration.observe({}, seconds);
    if (failure) {
      failures.inc();
      o.log(`[WARNING] plugin/health: Local health request to "${o.url}" failed: ${failure.message}`);
    } else if (seconds > 1) {
      o.log(`[WARNING] plugin/health: Local health request to "${o.url}" took more than 1s: ${seconds}s`);
    }
    timer = o.timers.setTimeout(() => void probe(), 1000);
  };
  timer = o.timers.setTimeout(() => void probe(), 1000);
  return () => {
    stopped = true;
    o.timers.clearTimeout(timer);
  };
}

function httpGet(url: string, timeoutMs: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, { timeout: timeoutMs }, (res) => {
      res.resume();
      resolve();
    });
    req.on("timeout", () => req.destroy(new Error(`timeout after ${timeoutMs}ms`)));
    req.on("error", reject);
  });
}
