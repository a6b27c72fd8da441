import { Counter, Gauge, Histogram, type Registry, register } from "prom-client";
import type { Clock } from "../util/clock.js";

/** What a queue reports; a no-op implementation is used when metrics are off. */
export interface QueueMetrics {
  add(item: unknown): void;
  get(item: unknown): void;
  done(item: unknown): void;
  retry(): void;
  /** Stops reporting this queue's in-flight work. */
  close(): void;
}

export const noopQueueMetrics: QueueMetrics = {
  add: () => undefined,
  get: () => undefined,
  done: () => undefined,
  retry: () => undefined,
  close: () => undefined,
};

/** The seconds since each in-flight item started, per queue name. */
interface InFlight {
  name: string;
  startedAt(): number[];
}

interface RegistryMetrics {
  depth: Gauge<"name">;
  adds: Counter<"name">;
  queueDuration: Histogram<"name">;
  workDuration: Histogram<"name">;
  retries: Counter<"name">;
  inFlight: Set<InFlight>;
}

// client-go's buckets: 10 ns to 1000 s, by factors of ten.
const buckets = Array.from({ length: 12 }, (_, i) => 1e-8 * 10 ** i);

const perRegistry = new WeakMap<Registry, RegistryMetrics>();

// Each registry gets the metric family once; every queue adds its own `name` label.
function metricsFor(registry: Registry, clock: Clock): RegistryMetrics {
  const existing = perRegistry.get(registry);
  if (existing) return existing;
  const inFlight = new Set<InFlight>();
  const registers = [registry];
  const secondsByQueue = () => {
    const now = clock.now();
    const byName = new Map<string, number[]>();
    for (const q of inFlight) {
      const list = byName.get(q.name) ?? [];
      list.push(...q.startedAt().map((t) => (now - t) / 1000));
      byName.set(q.name, list);
    }
    return byName;
  };
  const metrics: RegistryMetrics = {
    depth: new Gauge({
      name: "workqueue_depth",
      help: "Current depth of workqueue",
      labelNames: ["name"],
      registers,
    }),
    adds: new Counter({
      name: "workqueue_adds_total",
      help: "Total number of adds handled by workqueue",
      labelNames: ["name"],
      registers,
    }),
    queueDuration: new Histogram({
      name: "workqueue_queue_duration_seconds",
      help: "How long in seconds an item stays in workqueue before being requested",
      labelNames: ["name"],
      buckets,
      registers,
    }),
    workDuration: new Histogram({
      name: "workqueue_work_duration_seconds",
      help: "How long in seconds processing an item from workqueue takes",
      labelNames: ["name"],
      buckets,
      registers,
    }),
    retries: new Counter({
      name: "workqueue_retries_total",
      help: "Total number of retries handled by workqueue",
      labelNames: ["name"],
      registers,
    }),
    inFlight,
  };
  new Gauge({
    name: "workqueue_unfinished_work_seconds",
    help: "Seconds of work in progress not yet observed by work_duration; large values suggest stuck workers",
    labelNames: ["name"],
    registers,
    collect() {
      for (const [name, seconds] of secondsByQueue())
        this.set(
          { name },
          seconds.reduce((a, b) => a + b, 0),
        );
    },
  });
  new Gauge({
    name: "workqueue_longest_running_processor_seconds",
    help: "Seconds the longest-running item in the workqueue has been processed",
    labelNames: ["name"],
    registers,
    collect() {
      for (const [name, seconds] of secondsByQueue()) this.set({ name }, Math.max(0, ...seconds));
    },
  });
  perRegistry.set(registry, metrics);
  return metrics;
}

/** client-go's workqueue metrics for one named queue, in `registry` (the prom-client default if omitted). */
export function createQueueMetrics(name: string, clock: Clock, registry: Registry = register): QueueMetrics {
  const m = metricsFor(registry, clock);
  const addedAt = new Map<unknown, number>();
  const startedAt = new Map<unknown, number>();
  const labels = { name };
  const inFlight: InFlight = { name, startedAt: () => [...startedAt.values()] };
  m.inFlight.add(inFlight);
  // Make the series exist from the start, so dashboards show 0 rather than nothing.
  m.depth.set(labels, 0);
  m.adds.inc(labels, 0);
  m.retries.inc(labels, 0);
  return {
    add(item) {
      m.adds.inc(labels);
      m.depth.inc(labels);
      if (!addedAt.has(item)) addedAt.set(item, clock.now());
    },
    get(item) {
      m.depth.dec(labels);
      const t = addedAt.get(item);
      if (t !== undefined) m.queueDuration.observe(labels, (clock.now() - t) / 1000);
      addedAt.delete(item);
      startedAt.set(item, clock.now());
    },
    done(item) {
      const t = startedAt.get(item);
      if (t !== undefined) m.workDuration.observe(labels, (clock.now() - t) / 1000);
      startedAt.delete(item);
    },
    retry() {
      m.retries.inc(labels);
    },
    close() {
      m.inFlight.delete(inFlight);
    },
  };
}
