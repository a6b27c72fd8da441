import type { RequestOutcome } from "@switchyard/kube";
import type { Metrics } from "../../../metrics/metrics.js";

/** Prometheus's DefBuckets, which CoreDNS's client histograms use. */
const DEFAULT_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * The API client's metrics as CoreDNS v1.14.7 exports client-go's: `coredns_kubernetes_rest_client_requests_total
 * {code,method,host}` for every request (watches included, once the server answered them), and for the others
 * `..._request_duration_seconds{verb,host}` and `..._rate_limiter_duration_seconds{verb,host}`. `host` is the
 * API server URL's host as written (`10.96.0.1:443`). Our client has no client-side rate limiter, so its wait is
 * observed as 0, where client-go's token bucket reports the time a request was held back.
 */
export function clientMetrics(metrics: Metrics, server: string): (outcome: RequestOutcome) => void {
  const requests = metrics.counter(
    "coredns_kubernetes_rest_client_requests_total",
    "Number of HTTP requests, partitioned by status code, method, and host.",
    ["code", "method", "host"],
  );
  const latency = metrics.histogram(
    "coredns_kubernetes_rest_client_request_duration_seconds",
    "Request latency in seconds. Broken down by verb and host.",
    ["verb", "host"],
    DEFAULT_BUCKETS,
  );
  const limiter = metrics.histogram(
    "coredns_kubernetes_rest_client_rate_limiter_duration_seconds",
    "Client side rate limiter latency in seconds. Broken down by verb and host.",
    ["verb", "host"],
    DEFAULT_BUCKETS,
  );
  const host = urlHost(server);
  return (outcome) => {
    requests.inc({ code: outcome.code, method: outcome.method, host });
    // client-go times and throttles only requests that are not watches.
    if (outcome.watch) return;
    latency.observe({ verb: outcome.method, host }, outcome.seconds);
    limiter.observe({ verb: outcome.method, host }, 0);
  };
}

/** Go's url.URL.Host: the authority as written, port included even when it is the scheme's default. */
export function urlHost(server: string): string {
  const authority = /^[a-z][a-z0-9+.-]*:\/\/([^/?#]*)/i.exec(server)?.[1] ?? server;
  return authority.slice(authority.lastIndexOf("@") + 1);
}
