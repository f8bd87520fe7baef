// Reads a /metrics answer with an independent Prometheus text-format parser (parse-prometheus-text-format,
// a port of the Prometheus Python client's parser: it throws on a line that is not valid text format), and
// checks what the format promises of every histogram: cumulative buckets ending in +Inf, equal to _count.
//
// That parser folds every series of a histogram into one and drops their labels (its open issues #8 and
// #13), so histogram families are handed to it untyped — each of _bucket, _sum and _count is then a family
// of its own with its labels intact — and regrouped here.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export class Scrape {
  constructor(
    readonly samples: Sample[],
    /** Family name → type (counter, gauge, histogram, ...), from the TYPE lines. */
    readonly types: Map<string, string>,
  ) {}

  /** The sum of the samples named `name` whose labels include `labels` (0 when there is none). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.matching(name, labels).reduce((sum, s) => sum + s.value, 0);
  }

  /** The samples named `name` whose labels include `labels`. */
  matching(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }

  /** Every label value of every sample, with its label name. */
  labelValues(): { name: string; label: string; value: string }[] {
    return this.samples.flatMap((s) => Object.entries(s.labels).map(([label, value]) => ({ name: s.name, label, value })));
  }
}

export function parseScrape(text: string): Scrape {
  const types = new Map<string, string>();
  for (const m of text.matchAll(/^# TYPE (\S+) (\S+)$/gm)) types.set(m[1]!, m[2]!);
  const untypedHistograms = text.replace(/^# TYPE \S+ histogram$/gm, '');
  const samples: Sample[] = [];
  for (const family of parsePrometheusTextFormat(untypedHistograms)) {
    for (const m of family.metrics) {
      if (m.value === undefined) throw new Error(`${family.name}: a sample without a value`);
      samples.push({ name: family.name, labels: m.labels ?? {}, value: Number(m.value) });
    }
  }
  const scrape = new Scrape(samples, types);
  for (const [name, type] of types) if (type === 'histogram') checkHistogram(scrape, name);
  return scrape;
}

/** Per series: buckets cumulative in order of `le`, the last one +Inf, equal to _count; a _sum beside it. */
function checkHistogram(scrape: Scrape, name: string): void {
  const series = new Map<string, Sample[]>();
  for (const s of scrape.matching(`${name}_bucket`)) {
    const { le: _, ...rest } = s.labels;
    const key = seriesKey(rest);
    series.set(key, [...(series.get(key) ?? []), s]);
  }
  for (const [key, buckets] of series) {
    const les = buckets.map((b) => (b.labels.le === '+Inf' ? Infinity : Number(b.labels.le)));
    if (les.at(-1) !== Infinity) throw new Error(`${name}${key}: the last bucket is not +Inf`);
    for (let i = 1; i < buckets.length; i++) {
      if (!(les[i]! > les[i - 1]!) || buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${name}${key}: buckets not cumulative in order`);
    }
    const count = scrape.matching(`${name}_count`).filter((s) => seriesKey(s.labels) === key);
    const sum = scrape.matching(`${name}_sum`).filter((s) => seriesKey(s.labels) === key);
    if (count.length !== 1 || sum.length !== 1) throw new Error(`${name}${key}: one _count and one _sum expected`);
    if (count[0]!.value !== buckets.at(-1)!.value) throw new Error(`${name}${key}: _count differs from the +Inf bucket`);
  }
}

const seriesKey = (labels: Record<string, string>) => JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
