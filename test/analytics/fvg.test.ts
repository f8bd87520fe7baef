// Fair value gaps (src/analytics/fvg.ts): hand-worked series and properties.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../src/analytics/candles.ts';
import { fairValueGaps, type GapStatus } from '../../src/analytics/fvg.ts';

const hour = (i: number) => new Date(Date.UTC(2025, 0, 1, i)).toISOString();
const bars = (rows: [o: number, h: number, l: number, c: number][]): Candle[] => rows.map(([open, high, low, close], i) => ({ time: hour(i), open, high, low, close, volume: 1 }));

// Candle 2's low 12 is above candle 0's high 11: a bullish gap 11 … 12. Candle 3 dips to 11.6, candle 4 to 10.8.
const BULLISH = bars([
  [10, 11, 9, 10.5],
  [10.5, 14, 10.4, 13.5],
  [13.5, 15, 12, 14.5],
  [14.5, 14.8, 11.6, 12],
  [12, 12.5, 10.8, 11],
]);

describe('fair value gaps on hand-worked series', () => {
  it('a bullish gap: zone candle 1 high … candle 3 low, unfilled while no later candle trades inside it', () => {
    const r = fairValueGaps(BULLISH.slice(0, 3))!;
    // ce = (11 + 12) / 2 = 11.5; size 1; size_pct = 1 / 11.5 × 100 = 8.695652…; price 14.5 is above, distance to the top (12 − 14.5) / 14.5.
    expect(r.gaps).toEqual([
      {
        direction: 'bullish',
        top: 12,
        bottom: 11,
        ce: 11.5,
        size: 1,
        size_pct: 8.69565217391,
        formed_at: hour(1),
        age_candles: 0,
        status: 'unfilled',
        fill_pct: 0,
        distance_pct: -17.2413793103,
      },
    ]);
    expect(r.price).toBe(14.5);
    expect(r.nearest_unfilled_below).toEqual(r.gaps[0]);
    expect(r.nearest_unfilled_above).toBeNull();
  });

  it('a later low into the zone partially fills it ((12 − 11.6) / 1 = 40 %), one through the far edge fills it', () => {
    const partly = fairValueGaps(BULLISH.slice(0, 4))!.gaps[0]!;
    expect(partly).toMatchObject({ status: 'partially_filled', age_candles: 1 });
    expect(partly.fill_pct).toBeCloseTo(40, 9);
    // Price 12 sits on the top edge: distance 0.
    expect(partly.distance_pct).toBe(0);

    const r = fairValueGaps(BULLISH)!;
    expect(r.gaps).toHaveLength(1);
    expect(r.gaps[0]).toMatchObject({ status: 'filled', fill_pct: 100, age_candles: 2, distance_pct: 0 });
    expect(r.nearest_unfilled_below).toBeNull();
  });

  it('a bearish gap: zone candle 3 high … candle 1 low, above the price', () => {
    const r = fairValueGaps(
      bars([
        [20, 21, 19, 19.5],
        [19.5, 19.6, 16, 16.5],
        [16.5, 17, 15, 15.5],
      ]),
    )!;
    // ce 18, size 2, size_pct 2 / 18 × 100 = 11.11…; distance to the bottom (17 − 15.5) / 15.5 × 100 = 9.677…
    expect(r.gaps).toEqual([
      { direction: 'bearish', top: 19, bottom: 17, ce: 18, size: 2, size_pct: 11.1111111111, formed_at: hour(1), age_candles: 0, status: 'unfilled', fill_pct: 0, distance_pct: 9.67741935484 },
    ]);
    expect(r.nearest_unfilled_above).toEqual(r.gaps[0]);
  });

  it('touching an edge is not a fill; equal highs and lows are not a gap', () => {
    const touch = fairValueGaps(bars([[10, 11, 9, 10.5], [10.5, 14, 10.4, 13.5], [13.5, 15, 12, 14.5], [14.5, 14.6, 12, 13]]))!;
    expect(touch.gaps[0]).toMatchObject({ status: 'unfilled', fill_pct: 0 });
    expect(fairValueGaps(bars([[10, 11, 9, 10.5], [10.5, 14, 10.4, 13.5], [13.5, 15, 11, 14.5]]))!.gaps).toEqual([]);
  });

  it('the nearest unfilled gap on each side is the one closest to the price', () => {
    // Two bullish gaps below 30 (11…12 and 20…21), both unfilled: the upper one is nearer.
    const r = fairValueGaps(
      bars([
        [10, 11, 9, 10.5],
        [10.5, 14, 10.4, 13.5],
        [13.5, 15, 12, 14.5],
        [14.5, 20, 14, 19.5],
        [19.5, 26, 19, 25],
        [25, 30, 21, 29],
        [29, 31, 28, 30],
      ]),
    )!;
    const below = r.gaps.filter((g) => g.status === 'unfilled' && g.top < r.price).map((g) => [g.bottom, g.top]);
    expect(below).toContainEqual([11, 12]);
    expect(below).toContainEqual([20, 21]);
    expect([r.nearest_unfilled_below!.bottom, r.nearest_unfilled_below!.top]).toEqual([26, 28]);
  });
});

const RANK: Record<GapStatus, number> = { unfilled: 0, partially_filled: 1, filled: 2 };

const randomSeries = fc
  .array(fc.record({ mid: fc.double({ min: 10, max: 100, noNaN: true }), half: fc.double({ min: 0.01, max: 10, noNaN: true }) }), { minLength: 3, maxLength: 40 })
  .map((rows) => rows.map(({ mid, half }, i): Candle => ({ time: hour(i), open: mid, high: mid + half, low: mid - half, close: mid, volume: 1 })));

describe('fair value gap properties', () => {
  it('a series whose candles all trade through one common price has no gap', () => {
    const overlapping = fc
      .array(fc.record({ up: fc.double({ min: 0, max: 50, noNaN: true }), down: fc.double({ min: 0, max: 50, noNaN: true }) }), { minLength: 3, maxLength: 60 })
      .map((rows) => rows.map(({ up, down }, i): Candle => ({ time: hour(i), open: 100, high: 100 + up, low: 100 - down, close: 100, volume: 1 })));
    fc.assert(fc.property(overlapping, (c) => fairValueGaps(c)!.gaps.length === 0));
  });

  it("a gap's status only moves unfilled → partially_filled → filled, and its fill only grows, as candles are added", () => {
    fc.assert(
      fc.property(randomSeries, (c) => {
        const seen = new Map<string, { rank: number; fill: number }>();
        for (let n = 3; n <= c.length; n++) {
          for (const g of fairValueGaps(c.slice(0, n))!.gaps) {
            const key = `${g.direction} ${g.formed_at}`;
            const before = seen.get(key);
            if (before && (RANK[g.status] < before.rank || g.fill_pct < before.fill)) return false;
            seen.set(key, { rank: RANK[g.status], fill: g.fill_pct });
          }
        }
        return true;
      }),
    );
  });
});
