// Unit tests of the pure derivatives computations (src/analytics/derivatives.ts).
import { describe, expect, it } from 'vitest';
import {
  aggregateOiChange24h,
  changePct,
  clean,
  DAY_MS,
  fundingBias,
  HOUR_MS,
  inferIntervalHours,
  per8h,
  pointsFor24h,
  product,
  sumGiven,
  toPct,
  weightedAverage,
  windowAverage,
} from '../src/analytics/derivatives.ts';

const T = 1_783_296_000_000;

describe('toPct / clean / changePct / product / sumGiven', () => {
  it('turns fractions into percentages without floating-point noise', () => {
    expect(0.2931 * 100).not.toBe(29.31); // the noise this guards against (29.310000000000002)
    expect(toPct(0.7069)).toBe(70.69);
    expect(toPct(0.2931)).toBe(29.31);
    expect(toPct(null)).toBeNull();
    expect(clean(0.1 + 0.2)).toBe(0.3);
  });

  it('changePct is (to − from) / from × 100 and null when it cannot be computed', () => {
    expect(changePct(100, 104.5)).toBe(4.5);
    expect(changePct(15.322, 14.3161)).toBeCloseTo(-6.565069834, 8);
    expect(changePct(0, 5)).toBeNull();
    expect(changePct(null, 5)).toBeNull();
    expect(changePct(5, null)).toBeNull();
  });

  it('product and sumGiven skip nothing silently: null in → null out, except sums over what is given', () => {
    expect(product(2, 3.5)).toBe(7);
    expect(product(null, 3)).toBeNull();
    expect(sumGiven([1, null, 2.5])).toBe(3.5);
    expect(sumGiven([null, null])).toBeNull();
  });
});

describe('weightedAverage', () => {
  it('weights by the given weights and ignores items with a missing value, a missing weight or a zero weight', () => {
    // (0.0001 × 3 + 0.0003 × 1) / 4 = 0.00015
    expect(weightedAverage([{ value: 0.0001, weight: 3 }, { value: 0.0003, weight: 1 }, { value: 1, weight: null }, { value: null, weight: 9 }, { value: 5, weight: 0 }])).toBe(0.00015);
    expect(weightedAverage([{ value: null, weight: 1 }])).toBeNull();
    expect(weightedAverage([])).toBeNull();
  });
});

describe('windowAverage (7-day mean of settlements)', () => {
  const rows = (n: number, stepH: number, rate: (i: number) => number) =>
    Array.from({ length: n }, (_, i) => ({ time: T - i * stepH * HOUR_MS, rate: rate(i) }));

  it('averages the settlements in (newest − 7 d, newest]: 21 at 8 h; the row exactly 7 d old is excluded', () => {
    // rows 0..20 are inside (0.0001 each), row 21 is at exactly newest − 168 h, row 22 older.
    const r = windowAverage(rows(23, 8, (i) => (i <= 20 ? 0.0001 : 0.5)));
    expect(r).toEqual({ average: 0.0001, count: 21, from: T - 160 * HOUR_MS, to: T });
  });

  it('adapts to the interval actually seen (4 h → 42 rows) and to order', () => {
    const r = windowAverage(rows(50, 4, () => 0.0002).reverse());
    expect(r?.count).toBe(42);
    expect(r?.average).toBe(0.0002);
  });

  it('uses what there is when the history is shorter than 7 days, and null for none', () => {
    expect(windowAverage(rows(3, 8, (i) => i * 0.0001))).toMatchObject({ average: 0.0001, count: 3 });
    expect(windowAverage([])).toBeNull();
  });
});

describe('funding intervals', () => {
  it('infers the interval from the two newest settlements, only as whole hours from 1 to 24', () => {
    expect(inferIntervalHours([T - 16 * HOUR_MS, T, T - 8 * HOUR_MS])).toBe(8);
    expect(inferIntervalHours([T, T - 4 * HOUR_MS])).toBe(4);
    expect(inferIntervalHours([T, T - 90 * 60_000])).toBeNull();
    expect(inferIntervalHours([T])).toBeNull();
  });

  it('restates a rate per 8 h', () => {
    expect(per8h(0.0001, 8)).toBe(0.0001);
    expect(per8h(0.0001, 4)).toBe(0.0002);
    expect(per8h(0.0001, 1)).toBe(0.0008);
    expect(per8h(0.0001, null)).toBeNull();
    expect(per8h(null, 8)).toBeNull();
  });
});

describe('24 h open-interest change', () => {
  const series = (now: number, dayAgo: number) => [
    { time: T - DAY_MS, openInterest: dayAgo },
    { time: T - HOUR_MS, openInterest: 1 },
    { time: T, openInterest: now },
  ];

  it('takes the newest point and the one exactly 24 h before it', () => {
    expect(pointsFor24h(series(110, 100))).toEqual({ now: { time: T, openInterest: 110 }, dayAgo: { time: T - DAY_MS, openInterest: 100 } });
    expect(pointsFor24h(series(110, 100).slice(1))).toBeNull();
    expect(pointsFor24h([])).toBeNull();
  });

  it('sums coins over venues that have both points: (160 − 150) / 150 × 100', () => {
    const r = aggregateOiChange24h([
      { venue: 'a', series: series(105, 100) },
      { venue: 'b', series: series(55, 50) },
      { venue: 'c', series: series(999, 1).slice(1) }, // no point 24 h back: left out
    ]);
    expect(r.venues).toEqual(['a', 'b']);
    expect(r.pct).toBeCloseTo(6.666666667, 8);
    expect(aggregateOiChange24h([{ venue: 'c', series: [] }])).toEqual({ pct: null, venues: [] });
  });
});

describe('fundingBias thresholds', () => {
  it('long above +0.03 % per 8 h, short below −0.01 %, neutral in between (edges included)', () => {
    expect(fundingBias(0.00031, null, null)?.signal).toBe('long');
    expect(fundingBias(0.0003, null, null)?.signal).toBe('neutral');
    expect(fundingBias(0.0001, null, null)?.signal).toBe('neutral');
    expect(fundingBias(-0.0001, null, null)?.signal).toBe('neutral');
    expect(fundingBias(-0.00011, null, null)?.signal).toBe('short');
    expect(fundingBias(null, 0.0001, 5)).toBeNull();
  });

  it('states the numbers in the reason', () => {
    expect(fundingBias(0.0005, 0.0004, 2.5)?.reason).toBe(
      'OI-weighted funding +0.0500% per 8h is above +0.0300%: longs are crowded and pay shorts (7-day average +0.0400% per 8h, open interest +2.50% in 24h)',
    );
    expect(fundingBias(-0.0003, null, -1.234)?.reason).toBe(
      'OI-weighted funding -0.0300% per 8h is below -0.0100%: shorts are crowded and pay longs (open interest -1.23% in 24h)',
    );
    expect(fundingBias(0.0001, null, null)?.reason).toBe('OI-weighted funding +0.0100% per 8h is inside the neutral band -0.0100% to +0.0300%');
  });
});
