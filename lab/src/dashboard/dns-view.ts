import { parseGoDuration } from "@switchyard/basics";
import type { Pod } from "kubernetes-types/core/v1.js";
import { lameduckOf } from "../scenarios/kit/corefile.js";
import { metricSum } from "../scenarios/kit/prom.js";
import type { DnsPodState, DnsPodView, DnsView } from "./view-model.js";

/** One reading of a DNS pod's /metrics (the prometheus plugin's :9153), from the pod's node. */
export interface DnsScrape {
  pod: string;
  at: number;
  metrics: string;
  error: string;
}

/** The pod's request counter at the previous scrape, for a rate. */
export interface RequestMemory {
  at: number;
  requests: number;
}

const requestsOf = (metrics: string) => metricSum(metrics, "coredns_dns_requests_total");

export function rememberRequests(scrape: DnsScrape): RequestMemory | undefined {
  return scrape.error ? undefined : { at: scrape.at, requests: requestsOf(scrape.metrics) };
}

const isReady = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") === true;

/**
 * Where a DNS pod is in its life. Deleting it starts the lameduck window: the server keeps answering while /ready
 * already fails, so the proxies have that long to take it out of their rules. The deletion was asked
 * deletionGracePeriodSeconds before the deletionTimestamp.
 */
export function dnsPodState(
  pod: Pod,
  lameduckMs: number,
  now: number,
): { state: DnsPodState; endsAt?: number } {
  const deleting = pod.metadata?.deletionTimestamp;
  if (deleting) {
    const asked = Date.parse(deleting) - (pod.metadata?.deletionGracePeriodSeconds ?? 0) * 1000;
    const endsAt = asked + lameduckMs;
    return now < endsAt ? { state: "lameduck", endsAt } : { state: "terminating" };
  }
  if (pod.status?.phase !== "Running") return { state: "pending" };
  return { state: isReady(pod) ? "serving" : "not ready" };
}

function dnsPodView(
  pod: Pod,
  lameduckMs: number,
  scrape: DnsScrape | undefined,
  before: RequestMemory | undefined,
  now: number,
): DnsPodView {
  const { state, endsAt } = dnsPodState(pod, lameduckMs, now);
  const metrics = scrape && !scrape.error ? scrape.metrics : "";
  const requests = metrics ? requestsOf(metrics) : undefined;
  const cacheRequests = metricSum(metrics, "coredns_cache_requests_total");
  const seconds = scrape && before ? (scrape.at - before.at) / 1000 : 0;
  return {
    name: pod.metadata?.name ?? "",
    node: pod.spec?.nodeName ?? "",
    ip: pod.status?.podIP ?? "",
    state,
    ...(endsAt !== undefined ? { lameduckEndsAt: endsAt } : {}),
    ...(requests !== undefined && before && seconds > 0 && requests >= before.requests
      ? { qps: (requests - before.requests) / seconds }
      : {}),
    ...(cacheRequests > 0
      ? { cacheHitRatio: metricSum(metrics, "coredns_cache_hits_total") / cacheRequests }
      : {}),
    ...(requests !== undefined ? { requests } : {}),
    error: scrape?.error ?? "",
  };
}

/**
 * The lameduck of a Corefile in milliseconds: 0 when it has none (the server then exits at once), undefined when
 * it is no duration (the server refuses such a Corefile).
 */
export function lameduckMsOf(corefile: string): { text: string; ms: number | undefined } {
  const text = lameduckOf(corefile) ?? "";
  return { text, ms: text ? parseGoDuration(text) : 0 };
}

export function dnsView(
  pods: readonly Pod[],
  corefile: string,
  scrapes: ReadonlyMap<string, DnsScrape>,
  previous: ReadonlyMap<string, RequestMemory>,
  now: number,
): DnsView {
  const lameduck = lameduckMsOf(corefile);
  return {
    lameduck: lameduck.text,
    ...(corefile && lameduck.ms !== undefined ? { lameduckMs: lameduck.ms } : {}),
    pods: [...pods]
      .sort((a, b) => (a.metadata?.name ?? "").localeCompare(b.metadata?.name ?? ""))
      .map((p) => {
        const name = p.metadata?.name ?? "";
        return dnsPodView(p, lameduck.ms ?? 0, scrapes.get(name), previous.get(name), now);
      }),
  };
}
