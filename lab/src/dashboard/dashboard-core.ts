import type { Node, Pod, Service } from "kubernetes-types/core/v1.js";
import type { EndpointSlice } from "kubernetes-types/discovery/v1.js";
import type { MigrationProgress } from "../migrate/progress-file.js";
import { type DnsScrape, dnsView, type RequestMemory, rememberRequests } from "./dns-view.js";
import { lameduckWarning } from "./lameduck-warning.js";
import { migrationView } from "./migration-view.js";
import { nodeViews } from "./nodes-view.js";
import { type ProxyScrape, proxyView, rememberSyncs, type SyncMemory } from "./proxies-view.js";
import { hintState, serviceViews } from "./services-view.js";
import type { DashboardView, EndpointCounts, HintSample } from "./view-model.js";

/** The watched objects the view is made of, as the informers hold them. */
export interface LabObjects {
  nodes: readonly Node[];
  services: readonly Service[];
  slices: readonly EndpointSlice[];
  /** The kube-dns pods (k8s-app=kube-dns in kube-system). */
  dnsPods: readonly Pod[];
  /** The coredns ConfigMap's Corefile, "" when there is none. */
  corefile: string;
  /** The progress file of the last `migrate`, and whether its process still runs. */
  migration?: { progress: MigrationProgress; alive: boolean };
  notSynced: string[];
}

const sameCounts = (a: HintSample, c: EndpointCounts) =>
  a.total === c.total &&
  a.ready === c.ready &&
  a.serving === c.serving &&
  a.terminating === c.terminating &&
  a.hinted === c.hinted;

/**
 * Turns watched objects and scraped metrics into the page's view. It remembers what a single snapshot cannot
 * say: each Service's counts and hint state over time, each proxy's sync durations between scrapes, each DNS
 * pod's previous request count (for a rate). No I/O; time comes in as arguments.
 */
export class DashboardCore {
  readonly #timelines = new Map<string, HintSample[]>();
  readonly #syncs = new Map<string, SyncMemory>();
  readonly #proxyScrapes = new Map<string, ProxyScrape>();
  readonly #dnsScrapes = new Map<string, DnsScrape>();
  readonly #requestsBefore = new Map<string, RequestMemory>();

  constructor(
    private readonly lab: DashboardView["lab"],
    private readonly maxTimeline = 500,
  ) {}

  /**
   * A Service's endpoints changed ("namespace/name"): a change point when its counts or hint state differ from
   * the last one. Called on every slice event, so that short drops between two page updates are kept too.
   */
  recordEndpoints(service: string, counts: EndpointCounts, now: number): void {
    const timeline = this.#timelines.get(service) ?? [];
    const last = timeline.at(-1);
    if (last && sameCounts(last, counts)) return;
    timeline.push({ at: now, hints: hintState(counts), ...counts });
    this.#timelines.set(service, timeline.slice(-this.maxTimeline));
  }

  proxyScraped(scrape: ProxyScrape): void {
    this.#syncs.set(scrape.node, rememberSyncs(this.#syncs.get(scrape.node) ?? { history: [] }, scrape));
    this.#proxyScrapes.set(scrape.node, scrape);
  }

  dnsScraped(scrape: DnsScrape): void {
    const before = this.#dnsScrapes.get(scrape.pod);
    const memory = before && rememberRequests(before);
    if (memory) this.#requestsBefore.set(scrape.pod, memory);
    else this.#requestsBefore.delete(scrape.pod);
    this.#dnsScrapes.set(scrape.pod, scrape);
  }

  /** The rules a proxy had at its last scrape and the sync count then, to tell whether to count them again. */
  lastScrape(node: string): ProxyScrape | undefined {
    return this.#proxyScrapes.get(node);
  }

  view(objects: LabObjects, now: number): DashboardView {
    const nodes = nodeViews(objects.nodes);
    const services = serviceViews(objects.services, objects.slices).map((s) => {
      const key = `${s.namespace}/${s.name}`;
      if (!this.#timelines.has(key)) this.recordEndpoints(key, s.counts, now);
      return { ...s, timeline: this.#timelines.get(key) ?? [] };
    });
    this.forgetGone(objects);
    const proxies = nodes.map((n) => proxyView(n, this.#proxyScrapes.get(n.name), this.#syncs.get(n.name)));
    const dns = dnsView(objects.dnsPods, objects.corefile, this.#dnsScrapes, this.#requestsBefore, now);
    const warning = lameduckWarning(dns, proxies);
    return {
      at: now,
      lab: this.lab,
      notSynced: objects.notSynced,
      nodes,
      services,
      proxies,
      dns,
      ...(objects.migration
        ? { migration: migrationView(objects.migration.progress, objects.migration.alive) }
        : {}),
      warnings: warning ? [warning] : [],
    };
  }

  /** Drops what belongs to Services, nodes and pods that are gone, so a long session does not grow. */
  private forgetGone(objects: LabObjects): void {
    const services = new Set(objects.services.map((s) => `${s.metadata?.namespace}/${s.metadata?.name}`));
    for (const key of this.#timelines.keys()) if (!services.has(key)) this.#timelines.delete(key);
    const nodes = new Set(objects.nodes.map((n) => n.metadata?.name ?? ""));
    for (const map of [this.#syncs, this.#proxyScrapes])
      for (const key of map.keys()) if (!nodes.has(key)) map.delete(key);
    const pods = new Set(objects.dnsPods.map((p) => p.metadata?.name ?? ""));
    for (const map of [this.#dnsScrapes, this.#requestsBefore])
      for (const key of map.keys()) if (!pods.has(key)) map.delete(key);
  }
}
