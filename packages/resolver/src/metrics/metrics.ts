import { Gauge, Registry } from "prom-client";
import { CounterFamily, HistogramFamily } from "./series.js";

/** CoreDNS's duration buckets (plugin.TimeBuckets): 0.25 ms doubling up to about 8 s. */
export const TIME_BUCKETS: readonly number[] = Array.from({ length: 16 }, (_, i) => 0.00025 * 2 ** i);

/** CoreDNS's size buckets (plugin.SizeBuckets), in bytes. */
export const SIZE_BUCKETS: readonly number[] = [
  0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3,
];

/**
 * One Prometheus registry per running resolver, so that two resolvers in one process (tests, reloads)
 * never share counters. Families are created on first use and shared by every plugin that names them;
 * asking for a name again with other labels is a programming error and throws.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly families = new Map<string, CounterFamily | Gauge | HistogramFamily>();

  /** Counters and histograms are ours (see series.ts); gauges are prom-client's. */
  counter(name: string, help: string, labelNames: readonly string[] = []): CounterFamily {
    return this.family(
      name,
      () => {
        const made = new CounterFamily(name, help, labelNames);
        // A counter without labels shows 0 before its first increment, as prom-client's does.
        if (labelNames.length === 0) made.series({});
        this.registry.registerMetric(made as never);
        return made;
      },
      CounterFamily,
    );
  }

  /** `aggregator`: how workers' values combine (`first` for facts every worker states alike). */
  gauge(
    name: string,
    help: string,
    labelNames: readonly string[] = [],
    aggregator: "sum" | "first" = "sum",
  ): Gauge {
    return this.family(
      name,
      () => new Gauge({ name, help, labelNames, aggregator, registers: [this.registry] }),
      Gauge,
    );
  }

  histogram(
    name: string,
    help: string,
    labelNames: readonly string[],
    buckets: readonly number[],
  ): HistogramFamily {
    return this.family(
      name,
      () => {
        const made = new HistogramFamily(name, help, labelNames, buckets);
        this.registry.registerMetric(made as never);
        return made;
      },
      HistogramFamily,
    );
  }

  /** The text exposition format, as served on /metrics. */
  text(): Promise<string> {
    return this.registry.metrics();
  }

  private family<T extends CounterFamily | Gauge | HistogramFamily>(
    name: string,
    make: () => T,
    kind: abstract new (...args: never[]) => T,
  ): T {
    const known = this.families.get(name);
    if (known) {
      if (!(known instanceof kind)) throw new Error(`metric ${name} already registered as another kind`);
      return known;
    }
    const made = make();
    this.families.set(name, made);
    return made;
  }
}
