// Liquidity levels (src/analytics/liquidity.ts) on a hand-worked series.
import { describe, expect, it } from 'vitest';
import type { Candle } from '../../src/analytics/candles.ts';
import { equalLevelPools, levelStatus, liquidityLevels, swingIndices } from '../../src/analytics/liquidity.ts';

const hour = (i: number) => new Date(Date.UTC(2025, 0, 1, i)).toISOString();
const bars = (rows: [h: number, l: number, c: number][]): Candle[] => rows.map(([high, low, close], i) => ({ time: hour(i), open: close, high, low, close, volume: 1 }));

// With 1 candle on each side:
//   swing highs: #1 14 (10, 13.5 around it), #5 14.5 (12, 13), #8 12.02 (12, 11.9), #10 12.0 (11.9, 11.95)
//   swing lows:  #3 10 (11, 10.2), #6 9.5 (11, 10), #9 10.4 (10.5, 10.6)
//   #1 14: #5's high 14.5 went above, no later close did → swept
//   #3 10: #6's close 9.8 went below → taken
//   #5, #8, #10 and #6, #9: nothing traded through → untaken
const SERIES = bars([
  [10, 8, 9.5],
  [14, 9, 13],
  [13.5, 11, 12],
  [12.5, 10, 10.5],
  [12, 10.2, 11.5],
  [14.5, 11, 12.5],
  [13, 9.5, 9.8],
  [12, 10, 11.8],
  [12.02, 10.5, 11],
  [11.9, 10.4, 11.2],
  [12.0, 10.6, 11.5],
  [11.95, 10.9, 11.3],
]);

describe('liquidity levels on a hand-worked series', () => {
  it('finds swing highs and lows: strictly beyond the N candles on each side', () => {
    expect(swingIndices(SERIES, 1, 'high')).toEqual([1, 5, 8, 10]);
    expect(swingIndices(SERIES, 1, 'low')).toEqual([3, 6, 9]);
    // With 2 on each side: #5 (14.5 above 12.5, 12, 13, 12) and #6's low (9.5 below 10.2, 11, 10, 10.5).
    expect(swingIndices(SERIES, 2, 'high')).toEqual([5]);
    expect(swingIndices(SERIES, 2, 'low')).toEqual([6]);
    // Equal neighbours: neither is a swing.
    expect(swingIndices(bars([[1, 0, 1], [2, 0, 1], [2, 0, 1], [1, 0, 1]]), 1, 'high')).toEqual([]);
  });

  it('status: taken by a close through it, swept by a wick only, untaken otherwise', () => {
    expect(levelStatus(SERIES, 1, 'high')).toBe('swept');
    expect(levelStatus(SERIES, 5, 'high')).toBe('untaken');
    expect(levelStatus(SERIES, 3, 'low')).toBe('taken');
    expect(levelStatus(SERIES, 6, 'low')).toBe('untaken');
  });

  it('reports both sides, pools of relative-equal untaken highs, and the nearest untaken levels', () => {
    const r = liquidityLevels(SERIES, 1, 0.05)!;
    expect(r.price).toBe(11.3);
    expect(r.buy_side).toEqual([
      { price: 14, formed_at: hour(1), status: 'swept' },
      { price: 14.5, formed_at: hour(5), status: 'untaken' },
      { price: 12.02, formed_at: hour(8), status: 'untaken' },
      { price: 12, formed_at: hour(10), status: 'untaken' },
    ]);
    expect(r.sell_side).toEqual([
      { price: 10, formed_at: hour(3), status: 'taken' },
      { price: 9.5, formed_at: hour(6), status: 'untaken' },
      { price: 10.4, formed_at: hour(9), status: 'untaken' },
    ]);
    // 12.02 − 12 = 0.02 ≤ 0.05: one pool, priced at its highest member; 14.5 stands alone; 9.5 and 10.4 are 0.9 apart.
    expect(r.pools).toEqual({
      buy_side: [{ price: 12.02, count: 2, members: [{ price: 12.02, formed_at: hour(8) }, { price: 12, formed_at: hour(10) }] }],
      sell_side: [],
    });
    // (12 − 11.3) / 11.3 × 100 = 6.1946…; (10.4 − 11.3) / 11.3 × 100 = −7.9646…
    expect(r.nearest_untaken_above).toEqual({ side: 'buy_side', price: 12, formed_at: hour(10), distance_pct: 6.19469026549 });
    expect(r.nearest_untaken_below).toEqual({ side: 'sell_side', price: 10.4, formed_at: hour(9), distance_pct: -7.96460176991 });
    expect(r.pool_tolerance).toBe(0.05);
  });

  it('pools group from the lowest swing: a chain of small steps does not grow a pool beyond the tolerance', () => {
    const level = (price: number, i: number) => ({ price, formed_at: hour(i), status: 'untaken' as const });
    // 10, 10.04, 10.08, 10.12 with tolerance 0.05: {10, 10.04} then {10.08, 10.12}.
    const pools = equalLevelPools([level(10.08, 0), level(10, 1), level(10.12, 2), level(10.04, 3)], 0.05, 'sell_side');
    expect(pools.map((p) => [p.price, p.count])).toEqual([
      [10, 2],
      [10.08, 2],
    ]);
  });
});
