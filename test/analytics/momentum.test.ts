// The momentum verdict (src/analytics/momentum.ts) and its indicators (src/analytics/indicators.ts):
// hand-worked indicator values, RSI/MACD/EMA cross-checked against trading-signals (dev-only), the
// vote and trade-frame rules on the constructed series, symmetry, determinism.
import { EMA, MACD, RSI } from 'trading-signals';
import { describe, expect, it } from 'vitest';
import { atrReport } from '../../src/analytics/atr.ts';
import type { Candle } from '../../src/analytics/candles.ts';
import { ema, macd, rsi } from '../../src/analytics/indicators.ts';
import { liquidityLevels } from '../../src/analytics/liquidity.ts';
import { MOMENTUM_CANDLES_NEEDED, momentumScore, type Momentum } from '../../src/analytics/momentum.ts';
import { constructedKlines } from '../fakes/candles.ts';

const hour = (i: number) => new Date(Date.UTC(2025, 0, 1, i)).toISOString();

/** The 500 closed candles /v1/momentum-score analyses over the constructed series (rows 99-598; row 599 is the forming one). */
const fixture = (): Candle[] =>
  constructedKlines()
    .slice(99, 599)
    .map((r) => ({ time: new Date(r[0]).toISOString(), open: Number(r[1]), high: Number(r[2]), low: Number(r[3]), close: Number(r[4]), volume: Number(r[5]) }));

/** Prices reflected around k/2 (x → k − x): every directional reading flips; high and low swap. */
const mirror = (c: Candle[], k: number): Candle[] => c.map((b) => ({ ...b, open: k - b.open, close: k - b.close, high: k - b.low, low: k - b.high }));

describe('indicators on hand-worked series', () => {
  it('EMA: seeded by the mean of the first n values, then α = 2 / (n + 1)', () => {
    // n = 3, α = 0.5: seed (1+2+3)/3 = 2; 0.5×4 + 0.5×2 = 3; 0.5×5 + 0.5×3 = 4
    expect(ema([1, 2, 3, 4, 5], 3)).toEqual([null, null, 2, 3, 4]);
  });

  it("RSI: Wilder's averages seeded by the mean of the first n gains and losses", () => {
    // changes +1, −0.5, +1, +0.5; n = 2: gain (1+0)/2 = 0.5, loss (0+0.5)/2 = 0.25 → RS 2 → 66.67
    // then gain (0.5+1)/2 = 0.75, loss (0.25+0)/2 = 0.125 → RS 6 → 85.71; gain 0.625, loss 0.0625 → RS 10 → 90.91
    const r = rsi([10, 11, 10.5, 11.5, 12], 2);
    expect(r.slice(0, 2)).toEqual([null, null]);
    expect(r[2]).toBeCloseTo(200 / 3, 12);
    expect(r[3]).toBeCloseTo(600 / 7, 12);
    expect(r[4]).toBeCloseTo(1000 / 11, 12);
    expect(rsi([5, 5, 5, 5], 2)[3]).toBe(50); // no move at all
    expect(rsi([1, 2, 3, 4], 2)[3]).toBe(100); // no loss
  });

  it('MACD(2,3,2): line = EMA2 − EMA3, signal = EMA2 of the line, histogram = line − signal', () => {
    // Worked in exact fractions over 1, 2, 4, 8, 16, 32: line 5/6, 11/9, 239/108, 2791/648; signal 37/36, 589/324, 845/243.
    const m = macd([1, 2, 4, 8, 16, 32], 2, 3, 2);
    expect(m.slice(0, 3)).toEqual([null, null, null]);
    expect(m[3]!.line).toBeCloseTo(11 / 9, 12);
    expect(m[3]!.signal).toBeCloseTo(37 / 36, 12);
    expect(m[3]!.histogram).toBeCloseTo(7 / 36, 12);
    expect(m[4]!.histogram).toBeCloseTo(32 / 81, 12);
    expect(m[5]!.line).toBeCloseTo(2791 / 648, 12);
    expect(m[5]!.signal).toBeCloseTo(845 / 243, 12);
    expect(m[5]!.histogram).toBeCloseTo(1613 / 1944, 12);
  });
});

describe('indicators cross-checked against trading-signals on 500 constructed closes', () => {
  const closes = fixture().map((b) => b.close);

  it('RSI(14): the same definition, so every value agrees to 1e-9', () => {
    const ref = new RSI(14);
    const expected = closes.map((x) => ref.update(x, false));
    rsi(closes, 14).forEach((v, i) => {
      if (v === null) expect(expected[i]).toBeNull();
      else expect(Math.abs(v - expected[i]!)).toBeLessThan(1e-9);
    });
  });

  it('EMA20 and MACD(12,26,9): trading-signals seeds with the first value instead of a mean, so they agree once the seed has decayed', () => {
    const e = new EMA(20);
    const m = new MACD(new EMA(12), new EMA(26), new EMA(9));
    const refEma = closes.map((x) => e.update(x, false));
    const refMacd = closes.map((x) => m.update(x, false));
    const ours = ema(closes, 20);
    const oursMacd = macd(closes);
    // After 300 candles the seed weighs (1 − 2/21)^300 ≈ 1e-13 (EMA20) and (1 − 2/27)^274 ≈ 1e-9 (EMA26).
    for (let i = 300; i < closes.length; i++) {
      expect(Math.abs(ours[i]! - refEma[i]!)).toBeLessThan(1e-9);
      expect(Math.abs(oursMacd[i]!.histogram - refMacd[i]!.histogram)).toBeLessThan(1e-6);
    }
  });
});

const DIRECTION = { bullish: 1, bearish: -1, neutral: 0 } as const;

/** The readings follow their documented thresholds. */
function expectRules(m: Momentum) {
  const by = Object.fromEntries(m.signals.map((s) => [s.name, s]));
  const read = (v: number, bull: (x: number) => boolean, bear: (x: number) => boolean) => (bull(v) ? 'bullish' : bear(v) ? 'bearish' : 'neutral');
  expect(by.ema_trend!.reading).toBe(read(by.ema_trend!.value!, (x) => x >= 2, (x) => x <= -2));
  expect(by.rsi_14!.reading).toBe(read(by.rsi_14!.value!, (x) => x >= 55, (x) => x <= 45));
  expect(by.macd_histogram!.reading).toBe(read(by.macd_histogram!.value!, (x) => x > 0, (x) => x < 0));
  expect(by.macd_histogram_slope!.reading).toBe(read(by.macd_histogram_slope!.value!, (x) => x > 0, (x) => x < 0));
  expect(by.atr_regime!.reading).toBe('neutral');
  const pos = by.liquidity_position!.value;
  expect(by.liquidity_position!.reading).toBe(pos === null ? 'neutral' : read(pos, (x) => x > 0.6, (x) => x < 0.4));
  expect(m.signals.map((s) => [s.name, s.weight])).toEqual([
    ['ema_trend', 3],
    ['rsi_14', 2],
    ['macd_histogram', 2],
    ['macd_histogram_slope', 1],
    ['atr_regime', 0],
    ['liquidity_position', 1],
  ]);
  const score = m.signals.reduce((a, s) => a + s.weight * DIRECTION[s.reading], 0) / 9;
  expect(m.score).toBeCloseTo(score, 10);
  expect(m.bias).toBe(score >= 0.3 ? 'bullish' : score <= -0.3 ? 'bearish' : 'neutral');
  const factor = { low: 1, normal: 1, high: 0.85, extreme: 0.7 }[m.indicators.atr_regime];
  const agreement = m.bias === 'neutral' ? 1 - Math.abs(score) / 0.3 : Math.abs(score);
  expect(m.confidence).toBe(Math.round(100 * agreement * factor));
}

describe('momentum verdict', () => {
  it('on the constructed series: readings by their thresholds, the weighted vote, the regime-scaled confidence', () => {
    const c = fixture();
    const m = momentumScore(c, 'BTC/USDT 4h')!;
    expectRules(m);
    // The series ends in a decline: every EMA stacked downward, RSI 38.6 → bearish 3 + 2; MACD histogram still
    // positive (+2) but falling (−1); the close sits low between its liquidity levels (−1): (−3 −2 +2 −1 −1) / 9.
    expect(m.signals.map((s) => s.reading)).toEqual(['bearish', 'bearish', 'bullish', 'bearish', 'neutral', 'bearish']);
    expect(m.score).toBeCloseTo(-5 / 9, 10);
    expect(m.bias).toBe('bearish');
    // ATR% in the high regime (factor 0.85): round(100 × 5/9 × 0.85) = round(47.2) = 47.
    expect(m.indicators.atr_regime).toBe('high');
    expect(m.confidence).toBe(47);
    expect(m.price).toBe(c.at(-1)!.close);
    expect(m.thesis).toMatch(/^Bearish on BTC\/USDT 4h with confidence 47: the EMAs are stacked downward \(close 32207\.3 < EMA20 /);
  });

  it('frames the bearish case: entry up to close + 0.5 ATR, invalidation 0.1 ATR above the nearest untaken swing high, targets at untaken swing lows', () => {
    const c = fixture();
    const m = momentumScore(c, 'BTC/USDT 4h')!;
    const atr = atrReport(c, 14)!.atr;
    const liq = liquidityLevels(c, 3, 0.1 * atr)!;
    expect(m.entry).toEqual({ low: m.price, high: expect.closeTo(m.price + 0.5 * atr, 6) });
    const highsAbove = liq.buy_side.filter((l) => l.status === 'untaken' && l.price > m.entry!.high).map((l) => l.price);
    expect(m.invalidation_basis).toBe('swing');
    expect(m.invalidation).toBeCloseTo(Math.min(...highsAbove) + 0.1 * atr, 6);
    const lowsBelow = liq.sell_side.filter((l) => l.status === 'untaken' && l.price < m.price).map((l) => l.price).sort((a, b) => b - a);
    expect(m.targets).toEqual(lowsBelow.slice(0, 3).map((price) => ({ price, basis: 'liquidity' })));
    expect(m.targets.length).toBeGreaterThan(0);
  });

  it('mirrored prices give the opposite verdict: the score changes sign', () => {
    const c = fixture();
    const down = momentumScore(c, 'X')!;
    const up = momentumScore(mirror(c, 80_000), 'X')!;
    expect(up.score).toBeCloseTo(-down.score, 10);
    expect(up.bias).toBe('bullish');
    expectRules(up);
    // Bullish frame: entry below the close, invalidation under it, targets above it, nearest first.
    expect(up.entry!.high).toBe(up.price);
    expect(up.invalidation!).toBeLessThan(up.entry!.low);
    const prices = up.targets.map((t) => t.price);
    expect(prices.every((p) => p > up.entry!.high)).toBe(true);
    expect(prices).toEqual([...prices].sort((a, b) => a - b));
  });

  it('is deterministic: the same candles give the same verdict', () => {
    const c = fixture();
    expect(momentumScore(structuredClone(c), 'X')).toEqual(momentumScore(c, 'X'));
  });

  it('a flat market is neutral with full confidence and no trade frame', () => {
    const flat: Candle[] = Array.from({ length: 250 }, (_, i) => ({ time: hour(i), open: 100, high: 100, low: 100, close: 100, volume: 1 }));
    const m = momentumScore(flat, 'X')!;
    expect(m.signals.map((s) => [s.name, s.value, s.reading])).toEqual([
      ['ema_trend', 0, 'neutral'],
      ['rsi_14', 50, 'neutral'],
      ['macd_histogram', 0, 'neutral'],
      ['macd_histogram_slope', 0, 'neutral'],
      ['atr_regime', 0, 'neutral'],
      ['liquidity_position', null, 'neutral'],
    ]);
    expect(m).toMatchObject({ bias: 'neutral', score: 0, confidence: 100, entry: null, invalidation: null, invalidation_basis: null, targets: [] });
  });

  it('needs 208 closed candles (EMA200 takes 200, the ATR(14) report with its warm-up 208)', () => {
    expect(MOMENTUM_CANDLES_NEEDED).toBe(208);
    expect(momentumScore(fixture().slice(-207), 'X')).toBeNull();
    expect(momentumScore(fixture().slice(-208), 'X')).not.toBeNull();
  });
});
