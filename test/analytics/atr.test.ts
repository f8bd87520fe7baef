// Wilder's ATR (src/analytics/atr.ts): hand-worked numbers, a cross-check against an independent
// implementation (trading-signals' TR and WSMA, dev-only) on the constructed 600-candle series, and
// properties over random candles.
import fc from 'fast-check';
import { TR, WSMA } from 'trading-signals';
import { describe, expect, it } from 'vitest';
import { atrCandlesNeeded, atrRegime, atrReport, atrWarmUp, percentileRank, trueRanges, wilderAtr } from '../../src/analytics/atr.ts';
import type { Candle } from '../../src/analytics/candles.ts';
import { constructedKlines } from '../fakes/candles.ts';

const day = (i: number) => new Date(Date.UTC(2025, 0, 1 + i)).toISOString();
const bars = (rows: [h: number, l: number, c: number][]): Candle[] => rows.map(([high, low, close], i) => ({ time: day(i), open: close, high, low, close, volume: 1 }));

/** The constructed series (Binance kline rows) as candles. */
const fixtureBars = (): Candle[] =>
  constructedKlines().map((r) => ({ time: new Date(r[0]).toISOString(), open: Number(r[1]), high: Number(r[2]), low: Number(r[3]), close: Number(r[4]), volume: Number(r[5]) }));

// H, L, C; true ranges from candle 1 on:
//   1: max(11−9, |11−9|, |9−9|) = 2          2: max(12−10, |12−10.5|, |10−10.5|) = 2
//   3: max(11.5−9.5, |11.5−11|, |9.5−11|) = 2 4: max(13−10.5, |13−10| = 3, |10.5−10|) = 3   (gap up: high − previous close)
//   5: max(12−8 = 4, |12−12.5|, |8−12.5| = 4.5) = 4.5                                      (gap down: previous close − low)
const HAND = bars([
  [10, 8, 9],
  [11, 9, 10.5],
  [12, 10, 11],
  [11.5, 9.5, 10],
  [13, 10.5, 12.5],
  [12, 8, 9],
]);

describe("Wilder's ATR on a hand-worked series", () => {
  it('true range takes the previous close into account (gaps)', () => {
    expect(trueRanges(HAND)).toEqual([2, 2, 2, 3, 4.5]);
  });

  it('seeds with the mean of the first `period` TRs, then smooths: (prev × (n−1) + TR) / n', () => {
    // period 3: (2+2+2)/3 = 2; (2×2 + 3)/3 = 7/3; (7/3 × 2 + 4.5)/3 = 27.5/9
    const atr = wilderAtr(HAND, 3);
    expect(atr).toHaveLength(3);
    expect(atr[0]).toBe(2);
    expect(atr[1]).toBeCloseTo(7 / 3, 14);
    expect(atr[2]).toBeCloseTo(27.5 / 9, 14);
    expect(wilderAtr(HAND.slice(0, 3), 3)).toEqual([]); // 3 candles give only 2 TRs
  });

  it('reports ATR% of the last close, its percentile among the window and the regime', () => {
    // No warm-up here (the hand-worked series is short): the window starts at the seed.
    // ATR% at candles 3, 4, 5: 2/10 = 20 %, (7/3)/12.5 = 18.67 %, (27.5/9)/9 = 33.95 %; today is above both others → 100.
    const r = atrReport(HAND, 3, 3, 0)!;
    expect(r.atr).toBeCloseTo(3.05555555556, 10);
    expect(r.atr_pct).toBeCloseTo(33.9506172840, 9);
    expect(r.last_close).toBe(9);
    expect(r.percentile).toBe(100);
    expect(r.regime).toBe('extreme');
    expect(r.lookback).toEqual({ bars: 3, from: day(3), to: day(5) });
    // One candle fewer than period + 1 + lookback − 1: no report.
    expect(atrReport(HAND.slice(1), 3, 3, 0)).toBeNull();
  });

  it("warms up until the seed weighs at most 0.1 %: the fewest k with ((n − 1) / n)^k ≤ 0.001", () => {
    // n = 2: (1/2)^9 = 0.00195, (1/2)^10 = 0.00098 → 10. n = 14: (13/14)^93 = 0.00101, (13/14)^94 = 0.00094 → 94.
    expect([2, 14, 50, 114].map(atrWarmUp)).toEqual([10, 94, 342, 785]);
    for (const n of [2, 3, 14, 50, 114]) {
      const k = atrWarmUp(n);
      expect(((n - 1) / n) ** k).toBeLessThanOrEqual(0.001);
      expect(((n - 1) / n) ** (k - 1)).toBeGreaterThan(0.001);
    }
    // period + 1 seed + warm-up + 99 for the rest of the window: 14 → 15 + 94 + 99 = 208.
    expect(atrCandlesNeeded(14)).toBe(208);
    expect(atrCandlesNeeded(114)).toBe(999);
  });

  it('uses exactly the last atrCandlesNeeded candles: more history before them changes nothing', () => {
    const c = fixtureBars();
    const needed = atrCandlesNeeded(14);
    expect(atrReport(c.slice(-(needed - 1)), 14)).toBeNull();
    expect(atrReport(c, 14)).toEqual(atrReport(c.slice(-needed), 14));
    expect(atrReport(c.slice(-needed), 14)!.lookback).toEqual({ bars: 100, from: c.at(-100)!.time, to: c.at(-1)!.time });
  });

  it('percentile = share of the others strictly below; regime edges 25 / 75 / 95', () => {
    expect(percentileRank(5, [1, 5, 7, 9])).toBe(25);
    expect(percentileRank(5, [])).toBeNull();
    expect([24.99, 25, 75, 75.01, 95, 95.01].map(atrRegime)).toEqual(['low', 'normal', 'normal', 'high', 'high', 'extreme']);
  });
});

describe('ATR cross-checked against trading-signals (TR, then WSMA: the SMA-seeded 1/period exponential average)', () => {
  const candles = fixtureBars().slice(0, 400);

  it.each([2, 14, 50, 200])('period %i agrees to 1e-9 on 400 constructed candles', (period) => {
    // trading-signals' TR of the first candle is high − low (no previous close); Wilder's starts from the second.
    const tr = new TR();
    const ref = new WSMA(period);
    const expected: number[] = [];
    candles.forEach((c, i) => {
      const range = tr.update(c, false);
      if (i === 0) return;
      const v = ref.update(range, false);
      if (v !== null) expected.push(v);
    });
    const ours = wilderAtr(candles, period);
    expect(ours).toHaveLength(candles.length - period);
    expect(ours).toHaveLength(expected.length);
    ours.forEach((v, k) => expect(Math.abs(v - expected[k]!)).toBeLessThan(1e-9));
  });
});

/** Random candles: open, close and wicks around a positive price. */
const candleSeries = (min: number, max: number) =>
  fc
    .array(
      fc.record({
        o: fc.double({ min: 1, max: 1000, noNaN: true }),
        c: fc.double({ min: 1, max: 1000, noNaN: true }),
        up: fc.double({ min: 0, max: 50, noNaN: true }),
        down: fc.double({ min: 0, max: 0.99, noNaN: true }),
      }),
      { minLength: min, maxLength: max },
    )
    .map((rows) =>
      rows.map(({ o, c, up, down }, i): Candle => ({ time: day(i), open: o, close: c, high: Math.max(o, c) + up, low: Math.min(o, c) * (1 - down), volume: 1 })),
    );

const scale = (c: Candle[], k: number, shift = 0): Candle[] =>
  c.map((b) => ({ ...b, open: b.open * k + shift, high: b.high * k + shift, low: b.low * k + shift, close: b.close * k + shift }));

describe('ATR properties', () => {
  it('is never negative', () => {
    fc.assert(fc.property(candleSeries(3, 60), fc.integer({ min: 2, max: 20 }), (c, period) => wilderAtr(c, period).every((v) => v >= 0)));
  });

  it('scales with the prices and ignores a constant shift', () => {
    fc.assert(
      fc.property(candleSeries(3, 60), fc.integer({ min: 2, max: 20 }), fc.double({ min: 0.001, max: 1000, noNaN: true }), fc.double({ min: -0.5, max: 1e4, noNaN: true }), (c, period, k, shift) => {
        const base = wilderAtr(c, period);
        const scaled = wilderAtr(scale(c, k), period);
        const shifted = wilderAtr(scale(c, 1, shift), period);
        return base.every((v, i) => Math.abs(scaled[i]! - k * v) <= 1e-9 * Math.max(1, k * v) && Math.abs(shifted[i]! - v) <= 1e-9 * Math.max(1, Math.abs(shift), v));
      }),
    );
  });
});
