import { Counter, type Registry } from 'prom-client';

/**
 * Counters and histograms for the request path: an addition is a few Map lookups and a number added,
 * and prom-client reads the totals at scrape time. prom-client's own `inc` and `observe` check the label
 * names and hash the label object on every call; with a handful of them a request, that was the largest
 * part of the metrics' cost (about 0.3 µs each alone, several times that among a request's other work).
 * The exposition is prom-client's, unchanged: names, labels, buckets and the registry stay as they were.
 */

type Labels<L extends string> = Readonly<Record<L, string>>;

/** One label set's running values. */
interface Series<L extends string> {
  readonly labels: Labels<L>;
  /** a counter's total; a histogram's sum */
  value: number;
  /** a histogram's observations per bucket (not cumulative), the last one past every bound; else empty */
  readonly buckets: number[];
}

/**
 * Every label set seen, found by its values one label at a time (Maps keyed by the value): no key
 * string is built for a lookup, and no two label sets can share a series whatever their values hold.
 */
class SeriesTable<L extends string> {
  private readonly root = new Map<string, unknown>();
  readonly all: Series<L>[] = [];

  constructor(
    private readonly labelNames: readonly L[],
    private readonly bucketCount: number,
  ) {}

  of(labels: Labels<L>): Series<L> {
    const names = this.labelNames;
    let level = this.root;
    for (let i = 0; i < names.length - 1; i++) {
      const value = labelValue(labels, names[i]);
      let next = level.get(value) as Map<string, unknown> | undefined;
      if (!next) level.set(value, (next = new Map()));
      level = next;
    }
    const last = names.length ? labelValue(labels, names[names.length - 1]) : '';
    let series = level.get(last) as Series<L> | undefined;
    if (!series) {
      // a copy: the caller's object may be reused or changed after the call
      const own = {} as Record<L, string>;
      for (const name of names) own[name] = labelValue(labels, name);
      series = { labels: own, value: 0, buckets: new Array<number>(this.bucketCount).fill(0) };
      level.set(last, series);
      this.all.push(series);
    }
    return series;
  }
}

function labelValue<L extends string>(labels: Labels<L>, name: L): string {
  const value = labels[name];
  if (typeof value !== 'string') throw new TypeError(`label "${name}" has no value`);
  return value;
}

function checkAmount(value: number): void {
  if (!Number.isFinite(value) || value < 0) throw new TypeError(`not an amount a counter or histogram takes: ${value}`);
}

/**
 * A total with an amount added, held at the largest finite number: two finite amounts can add up to
 * Infinity (an upstream that reported 1e308 tokens, twice), which prom-client refuses at every scrape
 * after, so /metrics failed until a restart.
 */
function added(total: number, value: number): number {
  const sum = total + value;
  return sum === Number.POSITIVE_INFINITY ? Number.MAX_VALUE : sum;
}

interface TallyConfig<L extends string> {
  name: string;
  help: string;
  labelNames: readonly L[];
  registers: Registry[];
}

/** A Prometheus counter: `inc` adds to a plain number, the registry's scrape copies the totals. */
export class TalliedCounter<L extends string> {
  private readonly table: SeriesTable<L>;

  constructor(config: TallyConfig<L>) {
    const table = (this.table = new SeriesTable(config.labelNames, 0));
    new Counter({
      ...config,
      // a counter has no "set": the scrape starts from zero and adds each total
      collect() {
        this.reset();
        for (const series of table.all) this.inc(series.labels, series.value);
      },
    });
  }

  inc(labels: Labels<L>, value = 1): void {
    checkAmount(value);
    const series = this.table.of(labels);
    series.value = added(series.value, value);
  }
}

/**
 * A Prometheus histogram: `observe` counts into its bucket, and the registry's scrape reads the series in
 * the shape prom-client's own histogram gives it (cumulative `_bucket` lines with `le`, then `_sum` and
 * `_count`), so the text is the same.
 */
export class TalliedHistogram<L extends string> {
  private readonly table: SeriesTable<L>;
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly name: string;
  readonly help: string;

  private readonly upperBounds: readonly number[];

  constructor(config: TallyConfig<L> & { buckets: readonly number[] }) {
    this.upperBounds = [...config.buckets].sort((a, b) => a - b);
    this.name = config.name;
    this.help = config.help;
    this.table = new SeriesTable(config.labelNames, this.upperBounds.length + 1);
    // the registry takes any metric that answers get(); its typings list only prom-client's classes
    for (const registry of config.registers) registry.registerMetric(this as unknown as Parameters<Registry['registerMetric']>[0]);
  }

  observe(labels: Labels<L>, value: number): void {
    checkAmount(value);
    const series = this.table.of(labels);
    const bounds = this.upperBounds;
    let i = 0;
    while (i < bounds.length && value > bounds[i]) i++;
    series.buckets[i]++;
    series.value = added(series.value, value);
  }

  /**
   * The series with each value's labels whole, as prom-client's own histogram gives them (getMetricsAsJSON):
   * what the workers of `--workers N` send to be summed, which tells series apart by `labels` alone.
   */
  async get() {
    const data = await this.getForPromString();
    return { ...data, values: data.values.map(({ labels, sharedLabels, ...value }) => ({ ...value, labels: { ...labels, ...sharedLabels } })) };
  }

  /** What the registry reads at a scrape: prom-client's histogram shape, `le` before the series' labels. */
  async getForPromString() {
    const values: { labels: { le?: number | string }; sharedLabels: Labels<L>; value: number; metricName: string }[] = [];
    const bucket = `${this.name}_bucket`;
    for (const series of this.table.all) {
      const shared = series.labels;
      let count = 0;
      this.upperBounds.forEach((le, i) => {
        count += series.buckets[i];
        values.push({ labels: { le }, sharedLabels: shared, value: count, metricName: bucket });
      });
      count += series.buckets[this.upperBounds.length];
      values.push({ labels: { le: '+Inf' }, sharedLabels: shared, value: count, metricName: bucket });
      values.push({ labels: {}, sharedLabels: shared, value: series.value, metricName: `${this.name}_sum` });
      values.push({ labels: {}, sharedLabels: shared, value: count, metricName: `${this.name}_count` });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }
}
