/**
 * Counter and histogram families for the per-query path. prom-client checks and hashes the label set on
 * every increment; here a caller looks a series up once, keeps it, and bumps plain numbers. The families
 * speak prom-client's metric protocol (`get`, `getForPromString`), so a prom-client Registry renders and
 * aggregates them exactly like its own counters and histograms.
 */

type Labels = Record<string, string>;

interface Value {
  value: number;
  labels: Record<string, string | number>;
  sharedLabels?: Labels;
  metricName?: string;
}

interface MetricData {
  name: string;
  help: string;
  type: "counter" | "histogram";
  values: Value[];
  aggregator: "sum";
}

/** One labelled counter. */
export class CounterSeries {
  value = 0;
  constructor(readonly labels: Readonly<Labels>) {}
}

/** One labelled histogram: per-bucket (not cumulative) counts, then sum and count. */
export class HistogramSeries {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;

  constructor(
    readonly labels: Readonly<Labels>,
    private readonly bounds: readonly number[],
  ) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= (bounds[i] as number)) {
        (this.counts as { [i: number]: number })[i] = (this.counts[i] as number) + 1;
        break;
      }
    }
    this.sum += value;
    this.count++;
  }
}

abstract class Family<S extends { labels: Readonly<Labels> }> {
  readonly aggregator = "sum" as const;
  private readonly all = new Map<string, S>();

  constructor(
    readonly name: string,
    readonly help: string,
    readonly labelNames: readonly string[],
  ) {}

  /** The series for these labels (created at zero); keep it, this lookup is the slow part. */
  series(labels: Labels): S {
    const key = this.labelNames.map((n) => labels[n]).join("\u0000");
    let s = this.all.get(key);
    if (!s) {
      const names = Object.keys(labels);
      const stray = names.find((n) => !this.labelNames.includes(n));
      if (stray !== undefined || names.length !== this.labelNames.length)
        throw new Error(
          `metric ${this.name}: labels ${names.join(",")} are not ${this.labelNames.join(",")}`,
        );
      s = this.make({ ...labels });
      this.all.set(key, s);
    }
    return s;
  }

  protected get seriesList(): S[] {
    return [...this.all.values()];
  }

  reset(): void {
    this.all.clear();
  }

  protected abstract make(labels: Labels): S;
}

export class CounterFamily extends Family<CounterSeries> {
  readonly type = "counter" as const;

  /** prom-client's signature, for paths that are not hot. */
  inc(labels: Labels = {}, by = 1): void {
    this.series(labels).value += by;
  }

  protected make(labels: Labels): CounterSeries {
    return new CounterSeries(labels);
  }

  async get(): Promise<MetricData> {
    return {
      name: this.name,
      help: this.help,
      type: this.type,
      values: this.seriesList.map((s) => ({ value: s.value, labels: { ...s.labels } })),
      aggregator: this.aggregator,
    };
  }
}

export class HistogramFamily extends Family<HistogramSeries> {
  readonly type = "histogram" as const;

  constructor(
    name: string,
    help: string,
    labelNames: readonly string[],
    private readonly bounds: readonly number[],
  ) {
    super(name, help, labelNames);
  }

  observe(labels: Labels, value: number): void {
    this.series(labels).observe(value);
  }

  protected make(labels: Labels): HistogramSeries {
    return new HistogramSeries(labels, this.bounds);
  }

  /** As prom-client renders histograms: `le` first, then the series' labels. */
  async getForPromString(): Promise<MetricData> {
    const values: Value[] = [];
    const bucket = `${this.name}_bucket`;
    for (const s of this.seriesList) {
      const shared = { ...s.labels };
      let cumulative = 0;
      for (const [i, le] of this.bounds.entries()) {
        cumulative += s.counts[i] as number;
        values.push({ labels: { le }, sharedLabels: shared, value: cumulative, metricName: bucket });
      }
      values.push({ labels: { le: "+Inf" }, sharedLabels: shared, value: s.count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: shared, value: s.sum, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: shared, value: s.count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }

  /** The JSON form (what cluster aggregation reads): shared labels folded into each value's labels. */
  async get(): Promise<MetricData> {
    const data = await this.getForPromString();
    data.values = data.values.map(({ sharedLabels, labels, ...rest }) => ({
      ...rest,
      labels: { ...labels, ...sharedLabels },
    }));
    return data;
  }
}
