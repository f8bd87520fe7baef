// Unit tests of the pure derivatives computations (src/analytics/derivatives.ts).
import { describe, expect, it } from 'vitest';
import {
  aggregateOiChange24h,
  changePct,
  clean,
  DAY_MS,
  fundingBias,
  fundingPaidPer8h,
  HOUR_MS,
  inferIntervalHours,
  per8h,
  pointsFor24h,
  product,
  sumGiven,
  toPct,
  weightedAverage,
} from '../../src/analytics/derivatives.ts';

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

describe('fundingPaidPer8h (the 7-day figure)', () => {
  const rows = (n: number, stepH: number, rate: (i: number) => number) =>
    Array.from({ length: n }, (_, i) => ({ time: T - i * stepH * HOUR_MS, rate: rate(i) }));

  it('sums the settlements in (newest − 7 d, newest] and restates them per 8 h: 21 at 8 h; the row exactly 7 d old is excluded', () => {
    // rows 0..20 are inside (0.0001 each), row 21 is at exactly newest − 168 h, row 22 older: 21 × 0.0001 × 8 / 168 = 0.0001.
    const r = fundingPaidPer8h(rows(23, 8, (i) => (i <= 20 ? 0.0001 : 0.5)));
    expect(r).toEqual({ rate8h: 0.0001, count: 21, from: T - 160 * HOUR_MS, to: T });
  });

  it('at 4 h, 42 settlements of 0.0002 are 0.0084 over 168 h = 0.0004 per 8 h, whatever the order', () => {
    const r = fundingPaidPer8h(rows(50, 4, () => 0.0002).reverse());
    expect(r).toMatchObject({ rate8h: 0.0004, count: 42 });
  });

  it('an interval change within the window: 18 at 8 h then 24 at 1 h, all 0.0001 → 0.0042 × 8 / 168 = 0.0002', () => {
    const oneHour = Array.from({ length: 24 }, (_, i) => ({ time: T - i * HOUR_MS, rate: 0.0001 }));
    const eightHours = Array.from({ length: 19 }, (_, i) => ({ time: T - 23 * HOUR_MS - (i + 1) * 8 * HOUR_MS, rate: 0.0001 })); // the last at T − 175 h: outside
    // A mean per settlement restated at the current 1 h interval would say 0.0001 × 8 = 0.0008.
    expect(fundingPaidPer8h([...oneHour, ...eightHours])).toMatchObject({ rate8h: 0.0002, count: 42 });
  });

  it('tolerates millisecond jitter at the window edge: a row 168 h back stamped 9 ms later is still outside', () => {
    const r = fundingPaidPer8h([{ time: T + 2, rate: 0.0001 }, ...rows(21, 8, () => 0.0001).slice(1), { time: T - 168 * HOUR_MS + 11, rate: 0.5 }]);
    expect(r).toMatchObject({ rate8h: 0.0001, count: 21 });
  });

  it('null when the history does not reach back to the window start (part of the week unknown), or is empty', () => {
    expect(fundingPaidPer8h(rows(21, 8, () => 0.0001))).toBeNull(); // oldest at newest − 160 h
    expect(fundingPaidPer8h([])).toBeNull();
  });
});

describe('funding intervals', () => {
  it('infers the typical spacing of the newest settlements, rounded to the hour, from 1 to 24', () => {
    expect(inferIntervalHours([T - 16 * HOUR_MS, T, T - 8 * HOUR_MS])).toBe(8);
    expect(inferIntervalHours([T, T - 4 * HOUR_MS])).toBe(4);
    expect(inferIntervalHours([T])).toBeNull();
    expect(inferIntervalHours([T, T - 30 * HOUR_MS])).toBeNull();
  });

  it('rounds millisecond jitter away (08:00:00.011 after 00:00:00.002 is 8 h)', () => {
    expect(inferIntervalHours([T + 11, T - 8 * HOUR_MS + 2, T - 16 * HOUR_MS + 7])).toBe(8);
    expect(inferIntervalHours([T, T - 90 * 60_000])).toBe(2); // 1.5 h rounds to 2
  });

  it('the most common of the newest three gaps wins; a change of interval counts once it repeats', () => {
    const times = (...gapsNewestFirst: number[]) => gapsNewestFirst.reduce((acc, g) => [...acc, acc.at(-1)! - g * HOUR_MS], [T]);
    expect(inferIntervalHours(times(1, 8, 8, 8))).toBe(8); // one 1 h gap after 8 h ones: not yet
    expect(inferIntervalHours(times(1, 1, 8, 8))).toBe(1); // two of the newest three
    expect(inferIntervalHours(times(8, 9, 10))).toBe(8); // no repeat: the newest
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
