import {
  histogram,
  lastSyncGauge,
  metricSamples,
  programmingHistogram,
  syncHistogram,
} from "../scenarios/kit/prom.js";
import type { RuleCounts } from "../stack/proxy-measure.js";
import { bpfMapSizes } from "./bpf-maps-view.js";
import { bucketsOf, quantile } from "./histogram.js";
import type { ProxyView, SyncSample } from "./view-model.js";

/** One reading of a node's proxy: its /metrics and /proxyMode from the node's loopback, and our rules there. */
export interface ProxyScrape {
  node: string;
  at: number;
  mode: string;
  metrics: string;
  /** Counted again only when the proxy synced since the last count (rules change only on a sync). */
  rules?: RuleCounts;
  error: string;
}

/** What the dashboard remembers of one proxy between scrapes: its last sync counters and the history so far. */
export interface SyncMemory {
  last?: { count: number; sumSeconds: number };
  history: SyncSample[];
}

export const maxSyncSamples = 180;

/**
 * Adds the mean duration of the syncs made between the previous scrape and this one. The first scrape of a proxy,
 * and the first after it restarted (its count went down), count from zero: the syncs it made before are what is
 * already known of it, and the page's first view shows them rather than "no syncs seen yet".
 */
export function rememberSyncs(memory: SyncMemory, scrape: ProxyScrape): SyncMemory {
  if (scrape.error || !scrape.metrics) return memory;
  const h = histogram(scrape.metrics, syncHistogram);
  const now = { count: h.count, sumSeconds: h.sum };
  const last = memory.last && now.count >= memory.last.count ? memory.last : { count: 0, sumSeconds: 0 };
  if (now.count === last.count) return { ...memory, last: now };
  const syncs = now.count - last.count;
  const sample = { at: scrape.at, meanMs: ((now.sumSeconds - last.sumSeconds) / syncs) * 1000, syncs };
  return { last: now, history: [...memory.history, sample].slice(-maxSyncSamples) };
}

export function proxyView(
  node: { name: string; zone: string },
  scrape: ProxyScrape | undefined,
  memory: SyncMemory | undefined,
): ProxyView {
  const metrics = scrape?.error ? "" : (scrape?.metrics ?? "");
  const programming = bucketsOf(metrics, programmingHistogram);
  const p50 = quantile(0.5, programming);
  const p99 = quantile(0.99, programming);
  const lastSync = Math.max(0, ...metricSamples(metrics, lastSyncGauge));
  return {
    node: node.name,
    zone: node.zone,
    mode: scrape?.mode ?? "",
    error: scrape?.error ?? "",
    ...(scrape?.rules ? { rules: scrape.rules } : {}),
    bpfMaps: bpfMapSizes(metrics),
    ...(lastSync > 0 ? { lastSyncAt: lastSync * 1000 } : {}),
    syncs: histogram(metrics, syncHistogram).count,
    syncHistory: memory?.history ?? [],
    programming: {
      count: programming.counts.at(-1) ?? 0,
      ...(p50 !== undefined ? { p50Ms: p50 * 1000 } : {}),
      ...(p99 !== undefined ? { p99Ms: p99 * 1000 } : {}),
    },
    ...(scrape ? { scrapedAt: scrape.at } : {}),
  };
}
